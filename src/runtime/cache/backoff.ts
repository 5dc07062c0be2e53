import { type Clock, realClock } from '../queue/clock.ts';

/** Jittered exponential backoff (client-go's wait.Backoff with jitter 1.0), reset after a healthy period. */
export class JitteredBackoff {
  private failures = 0;
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly random: () => number;

  constructor(baseMs = 800, maxMs = 30_000, random: () => number = Math.random) {
    this.baseMs = baseMs;
    this.maxMs = maxMs;
    this.random = random;
  }

  next(): number {
    const raw = Math.min(this.maxMs, this.baseMs * 2 ** this.failures);
    this.failures++;
    return Math.min(this.maxMs, raw + raw * this.random());
  }

  reset(): void {
    this.failures = 0;
  }
}

/** Waits `ms` on `clock`, or until `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal, clock: Clock = realClock): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = clock.setTimeout(done, ms, { keepAlive: true });
    function done() {
      clock.clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
