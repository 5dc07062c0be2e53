import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import {
  backoffDelays,
  DEFAULT_TRANSIENT_RETRY,
  type RetryOptions,
  retryOnTransient,
} from '../../../src/runtime/write/retry.ts';

const conflict = () =>
  new ApiError(409, 'Conflict', 'the object has been modified; please apply your changes');
const alreadyExists = () => new ApiError(409, 'AlreadyExists', 'already exists');
const notFound = () => new ApiError(404, 'NotFound', 'not found');
const unavailable = () => new ApiError(503, 'ServiceUnavailable', 'try later');

/** Records sleeps instead of sleeping; jitter fixed at its midpoint. */
function harness(): { sleeps: number[]; options: RetryOptions } {
  const sleeps: number[] = [];
  return {
    sleeps,
    options: {
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      random: () => 0.5,
    },
  };
}

/** A function that fails with the given errors in turn, then returns 'ok'. */
function failing(errors: Error[]): { fn: (attempt: number) => Promise<string>; attempts: number[] } {
  const attempts: number[] = [];
  return {
    attempts,
    fn: async (attempt) => {
      attempts.push(attempt);
      const err = errors[attempt - 1];
      if (err) throw err;
      return 'ok';
    },
  };
}

describe('backoffDelays', () => {
  it('gives a constant pause plus up to its jitter when factor is 1', () => {
    const backoff = { initialDelayMs: 10, factor: 1, jitter: 0.1 };
    assert.deepEqual(
      backoffDelays(5, backoff, () => 0),
      [10, 10, 10, 10],
    );
    assert.deepEqual(
      backoffDelays(5, backoff, () => 0.5),
      [10.5, 10.5, 10.5, 10.5],
    );
  });

  it('grows by factor and stops at maxDelayMs', () => {
    assert.deepEqual(
      backoffDelays(DEFAULT_TRANSIENT_RETRY.attempts, DEFAULT_TRANSIENT_RETRY.backoff, () => 0),
      [10, 50, 250],
    );
    assert.deepEqual(
      backoffDelays(5, { initialDelayMs: 100, factor: 2, jitter: 0, maxDelayMs: 300 }),
      [100, 200, 300, 300],
    );
  });

  it('has no pause for a single attempt', () => {
    assert.deepEqual(backoffDelays(1, DEFAULT_TRANSIENT_RETRY.backoff), []);
  });
});

describe('retryOnTransient', () => {
  it('retries 5xx, 429 and network errors, with DefaultBackoff pauses', async () => {
    const { sleeps, options } = harness();
    const { fn, attempts } = failing([
      unavailable(),
      new ApiError(429, 'TooManyRequests', 'slow down'),
      new TypeError('fetch failed'),
    ]);
    assert.equal(await retryOnTransient(fn, options), 'ok');
    assert.deepEqual(attempts, [1, 2, 3, 4]);
    assert.deepEqual(sleeps, [10.5, 52.5, 262.5]);
  });

  it('makes 4 attempts by default, then throws the last error', async () => {
    const { sleeps, options } = harness();
    const errors = [unavailable(), unavailable(), unavailable(), unavailable()];
    const { fn, attempts } = failing(errors);
    await assert.rejects(retryOnTransient(fn, options), (err) => err === errors[3]);
    assert.deepEqual(attempts, [1, 2, 3, 4]);
    assert.equal(sleeps.length, 3);
  });

  it('honours a custom attempt count and backoff', async () => {
    const { sleeps, options } = harness();
    const { fn, attempts } = failing([unavailable(), unavailable(), unavailable()]);
    await assert.rejects(
      retryOnTransient(fn, { ...options, attempts: 2, backoff: { initialDelayMs: 100, jitter: 0 } }),
      ApiError,
    );
    assert.deepEqual(attempts, [1, 2]);
    assert.deepEqual(sleeps, [100]);
  });

  it('does not retry client errors, conflicts included', async () => {
    for (const error of [conflict(), notFound(), alreadyExists()]) {
      const { sleeps, options } = harness();
      const { fn, attempts } = failing([error]);
      await assert.rejects(retryOnTransient(fn, options), (err) => err === error);
      assert.deepEqual(attempts, [1]);
      assert.deepEqual(sleeps, []);
    }
  });

  it('rejects a nonsense attempt count', async () => {
    await assert.rejects(
      retryOnTransient(async () => 1, { attempts: 0 }),
      RangeError,
    );
  });

  it('stops sleeping when the signal aborts (real timer)', async () => {
    const controller = new AbortController();
    const { fn } = failing([unavailable(), unavailable()]);
    const pending = retryOnTransient(fn, { signal: controller.signal, backoff: { initialDelayMs: 60_000 } });
    controller.abort(new Error('stopping'));
    await assert.rejects(pending, /stopping|aborted/);
  });
});
