import { type Clock, realClock } from './clock.ts';
import { TokenBucket } from './token-bucket.ts';

export { TokenBucket } from './token-bucket.ts';

/** Decides how long an item waits before it is requeued after a failure. */
export interface RateLimiter<T> {
  /** Records one more requeue of `item` and returns how many milliseconds it should wait. */
  when(item: T): number;
  /** Stops tracking `item` (it succeeded, or is given up on): its backoff starts over. */
  forget(item: T): void;
  /** How many times `item` has been requeued since it was last forgotten. */
  numRequeues(item: T): number;
}

export const DEFAULT_BASE_DELAY_MS = 5;
/**
 * client-go's default maximum is 1000 s (~16.7 min). We cap at 5 minutes: backoff runs from
 * milliseconds up to minutes, so a persistently failing object is still retried a few times an hour.
 */
export const DEFAULT_MAX_DELAY_MS = 5 * 60 * 1000;
export const DEFAULT_OVERALL_QPS = 10;
export const DEFAULT_OVERALL_BURST = 100;

/** Per-item exponential backoff: baseDelay * 2^failures, capped at maxDelay. */
export class ItemExponentialFailureRateLimiter<T> implements RateLimiter<T> {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly #failures = new Map<T, number>();

  constructor(baseDelayMs = DEFAULT_BASE_DELAY_MS, maxDelayMs = DEFAULT_MAX_DELAY_MS) {
    if (!(baseDelayMs >= 0) || !(maxDelayMs >= 0)) throw new RangeError('delays must be >= 0');
    this.baseDelayMs = baseDelayMs;
    this.maxDelayMs = maxDelayMs;
  }

  when(item: T): number {
    const failures = this.#failures.get(item) ?? 0;
    this.#failures.set(item, failures + 1);
    const backoff = this.baseDelayMs * 2 ** failures;
    // Written as !(a < b) so that overflow to Infinity (and 0 * Infinity = NaN) also lands on the cap.
    return !(backoff < this.maxDelayMs) ? this.maxDelayMs : backoff;
  }

  forget(item: T): void {
    this.#failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.#failures.get(item) ?? 0;
  }
}

/** Overall (not per-item) limit: every requeue takes a token from a shared bucket. */
export class BucketRateLimiter<T> implements RateLimiter<T> {
  readonly bucket: TokenBucket;

  constructor(bucket: TokenBucket) {
    this.bucket = bucket;
  }

  when(_item: T): number {
    return this.bucket.take();
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }
}

/** Combines limiters: an item waits as long as the strictest of them says. */
export class MaxOfRateLimiter<T> implements RateLimiter<T> {
  readonly #limiters: readonly RateLimiter<T>[];

  constructor(...limiters: RateLimiter<T>[]) {
    if (limiters.length === 0) throw new RangeError('MaxOfRateLimiter needs at least one limiter');
    this.#limiters = limiters;
  }

  when(item: T): number {
    // Every limiter must see the call (each records the requeue), so no early exit.
    let longest = 0;
    for (const limiter of this.#limiters) longest = Math.max(longest, limiter.when(item));
    return longest;
  }

  forget(item: T): void {
    for (const limiter of this.#limiters) limiter.forget(item);
  }

  numRequeues(item: T): number {
    let most = 0;
    for (const limiter of this.#limiters) most = Math.max(most, limiter.numRequeues(item));
    return most;
  }
}

/**
 * The controller default, as in controller-runtime: per-item exponential backoff from 5 ms to
 * 5 minutes (see DEFAULT_MAX_DELAY_MS for why not client-go's 1000 s), combined with an overall
 * token bucket of 10 qps with a burst of 100.
 */
export function defaultControllerRateLimiter<T>(clock: Clock = realClock): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialFailureRateLimiter<T>(DEFAULT_BASE_DELAY_MS, DEFAULT_MAX_DELAY_MS),
    new BucketRateLimiter<T>(new TokenBucket(DEFAULT_OVERALL_QPS, DEFAULT_OVERALL_BURST, clock)),
  );
}
