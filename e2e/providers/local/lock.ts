import { mkdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { dirname } from 'node:path';

/** A lock left by a process that died is taken over once it has not been refreshed for this long. */
const STALE_AFTER_MS = 60_000;
const REFRESH_EVERY_MS = 10_000;
const POLL_MS = 250;

/**
 * Runs `fn` holding a lock shared by every process on the machine (a directory: mkdir is atomic).
 * The holder refreshes it while `fn` runs, so a wait of any length (a cold toolchain build takes
 * many minutes) is never mistaken for a dead holder; a holder that died leaves a lock that goes
 * stale within a minute. Waiting gives up after `timeoutMs` with a message naming the lock.
 */
export async function withFileLock<T>(path: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  mkdirSync(dirname(path), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(path);
      break;
    } catch {
      const mtime = statSync(path, { throwIfNoEntry: false })?.mtimeMs;
      if (mtime !== undefined && Date.now() - mtime > STALE_AFTER_MS)
        rmSync(path, { recursive: true, force: true });
      if (Date.now() > deadline) {
        throw new Error(
          `timed out after ${Math.round(timeoutMs / 1000)}s waiting for the lock ${path} (another process holds it)`,
        );
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }
  const refresh = setInterval(() => {
    const now = new Date();
    try {
      utimesSync(path, now, now);
    } catch {
      // removed as stale by another process: nothing to refresh
    }
  }, REFRESH_EVERY_MS);
  refresh.unref();
  try {
    return await fn();
  } finally {
    clearInterval(refresh);
    rmSync(path, { recursive: true, force: true });
  }
}
