import { setTimeout as delay } from 'node:timers/promises';

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Gives up at once when aborted (e.g. the process being waited on exited), with its reason. */
  signal?: AbortSignal;
}

/** Polls `check` until it returns a value other than undefined/false, or fails with `what` after timeoutMs. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 60_000, intervalMs = 200, signal }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    const suffix = lastError ? ` (last error: ${message(lastError)})` : '';
    if (signal?.aborted) throw new Error(`gave up waiting for ${what}: ${message(signal.reason)}${suffix}`);
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${suffix}`);
    await delay(intervalMs, undefined, { signal }).catch(() => undefined);
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
