import { type Clock, realClock } from './clock.ts';

/**
 * A token bucket in the style of golang.org/x/time/rate: it holds at most `burst` tokens, refills at
 * `qps` tokens per second and starts full. Taking a token always succeeds; when the bucket is empty it
 * reserves a future token and reports how long the caller must wait before acting. Used for the work
 * queue's overall retry limit and for the client-side QPS/burst limit of API calls.
 */
export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  readonly #clock: Clock;
  /** May go negative: each token below zero is a reservation someone is waiting on. */
  #tokens: number;
  #updatedAt: number;
  /** When the most recent reservation may act; lets a cancelled reservation know whether it can give its token back. */
  #lastReservationAt: number;

  /** @param qps tokens per second, > 0 (Infinity disables limiting) @param burst bucket size, >= 1 */
  constructor(qps: number, burst: number, clock: Clock = realClock) {
    if (!(qps > 0)) throw new RangeError(`TokenBucket qps must be > 0, got ${qps}`);
    if (!(burst >= 1)) throw new RangeError(`TokenBucket burst must be >= 1, got ${burst}`);
    this.qps = qps;
    this.burst = burst;
    this.#clock = clock;
    this.#tokens = burst;
    this.#updatedAt = clock.now();
    this.#lastReservationAt = this.#updatedAt;
  }

  /** Takes a token and returns the milliseconds to wait before using it (0 when one was available). */
  take(): number {
    return this.#reserve().waitMs;
  }

  /** Tokens available right now (negative while reservations are outstanding). */
  available(): number {
    this.#refill(this.#clock.now());
    return this.#tokens;
  }

  /**
   * Waits until a token is available. If `signal` aborts first, the reservation is cancelled (its token
   * returned when no later reservation depends on it) and the promise rejects with the abort reason.
   */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const reservation = this.#reserve();
    if (reservation.waitMs === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.#clock.clearTimeout(timer);
        this.#cancel(reservation.actAt);
        reject(signal?.reason);
      };
      // keepAlive: the caller is awaiting this wait to do real work, so the process must not exit under it.
      const timer = this.#clock.setTimeout(
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reservation.waitMs,
        { keepAlive: true },
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #reserve(): { waitMs: number; actAt: number } {
    const now = this.#clock.now();
    if (this.qps === Number.POSITIVE_INFINITY) return { waitMs: 0, actAt: now };
    this.#refill(now);
    this.#tokens -= 1;
    const waitMs = this.#tokens < 0 ? (-this.#tokens * 1000) / this.qps : 0;
    const actAt = now + waitMs;
    this.#lastReservationAt = actAt;
    return { waitMs, actAt };
  }

  #cancel(actAt: number): void {
    const now = this.#clock.now();
    if (actAt <= now) return;
    // Tokens reserved after this one were priced assuming this one exists; only the part of the
    // token not already spoken for by them can be given back.
    const reservedAfter = ((this.#lastReservationAt - actAt) * this.qps) / 1000;
    const restore = 1 - reservedAfter;
    if (restore <= 0) return;
    this.#refill(now);
    this.#tokens = Math.min(this.burst, this.#tokens + restore);
  }

  #refill(now: number): void {
    const elapsedMs = Math.max(0, now - this.#updatedAt);
    this.#tokens = Math.min(this.burst, this.#tokens + (elapsedMs * this.qps) / 1000);
    this.#updatedAt = now;
  }
}
