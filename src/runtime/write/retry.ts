import { setTimeout as sleepFor } from 'node:timers/promises';
import { isTransient } from '../client/errors.ts';

/**
 * Retries in the shape of client-go's k8s.io/client-go/util/retry: a fixed number of attempts with
 * a (jittered, optionally growing) pause between them, retrying only errors a predicate accepts.
 */

/** client-go's wait.Backoff, in milliseconds. */
export interface Backoff {
  /** Pause before the second attempt. */
  initialDelayMs: number;
  /** Each pause is the previous one times this (1 = constant). */
  factor: number;
  /** Each pause is lengthened by up to this fraction of itself, at random (0 = none). */
  jitter: number;
  /** Upper bound for a pause before jitter; no bound when absent. */
  maxDelayMs?: number;
}

export interface RetryOptions {
  /** Total calls of fn, including the first. */
  attempts?: number;
  backoff?: Partial<Backoff>;
  signal?: AbortSignal;
  /** Injectable for tests; defaults to a real timer that rejects when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Injectable for tests; a number in [0, 1). */
  random?: () => number;
}

export interface RetryPolicy {
  readonly attempts: number;
  readonly backoff: Readonly<Backoff>;
}

/** client-go retry.DefaultBackoff: for transient server trouble, which needs time to pass. */
export const DEFAULT_TRANSIENT_RETRY: RetryPolicy = {
  attempts: 4,
  backoff: { initialDelayMs: 10, factor: 5, jitter: 0.1 },
};

const realSleep = async (ms: number, signal?: AbortSignal): Promise<void> => {
  await sleepFor(ms, undefined, { signal });
};

/** The pauses between `attempts` calls (attempts - 1 of them), as wait.Backoff.Step() produces them. */
export function backoffDelays(
  attempts: number,
  backoff: Backoff,
  random: () => number = Math.random,
): number[] {
  const delays: number[] = [];
  let base = backoff.initialDelayMs;
  for (let i = 1; i < attempts; i++) {
    const capped = backoff.maxDelayMs === undefined ? base : Math.min(base, backoff.maxDelayMs);
    delays.push(backoff.jitter > 0 ? capped + random() * backoff.jitter * capped : capped);
    base *= backoff.factor;
  }
  return delays;
}

/**
 * Calls fn until it succeeds, fails with an error `retriable` rejects, or `attempts` calls have
 * failed; then the last error is thrown. fn gets the 1-based attempt number.
 */
async function retryOnError<R>(
  retriable: (err: unknown) => boolean,
  fn: (attempt: number) => Promise<R>,
  options: RetryOptions,
  defaults: RetryPolicy,
): Promise<R> {
  const attempts = options.attempts ?? defaults.attempts;
  if (!(attempts >= 1)) throw new RangeError(`retry attempts must be >= 1, got ${attempts}`);
  const backoff: Backoff = { ...defaults.backoff, ...options.backoff };
  const delays = backoffDelays(attempts, backoff, options.random);
  const sleep = options.sleep ?? realSleep;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt >= attempts || !retriable(err)) throw err;
    }
    await sleep(delays[attempt - 1] ?? 0, options.signal);
  }
}

/** Retries throttling, timeouts, 5xx and network failures (errors.isTransient). */
export function retryOnTransient<R>(
  fn: (attempt: number) => Promise<R>,
  options: RetryOptions = {},
): Promise<R> {
  return retryOnError(isTransient, fn, options, DEFAULT_TRANSIENT_RETRY);
}
