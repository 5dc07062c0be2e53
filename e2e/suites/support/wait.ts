/** Polls `check` until it returns something other than undefined/false; fails with `what` after timeoutMs. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 60_000, intervalMs = 500 }: { timeoutMs?: number; intervalMs?: number } = {},
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
    if (Date.now() > deadline) {
      const suffix = lastError
        ? ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`
        : '';
      throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${suffix}`);
    }
    await sleep(intervalMs);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
