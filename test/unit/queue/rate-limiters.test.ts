import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../src/runtime/queue/clock.ts';
import {
  BucketRateLimiter,
  DEFAULT_MAX_DELAY_MS,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
} from '../../../src/runtime/queue/rate-limiters.ts';
import { TokenBucket } from '../../../src/runtime/queue/token-bucket.ts';

function delays<T>(limiter: RateLimiter<T>, item: T, count: number): number[] {
  return Array.from({ length: count }, () => limiter.when(item));
}

describe('ItemExponentialFailureRateLimiter', () => {
  it('doubles the delay per failure from the base delay and caps it', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(1, 1000);
    assert.deepEqual(delays(limiter, 'a', 12), [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 1000]);
    assert.equal(limiter.numRequeues('a'), 12);
  });

  it('tracks items independently', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(5, 1000);
    assert.deepEqual(delays(limiter, 'a', 3), [5, 10, 20]);
    assert.deepEqual(delays(limiter, 'b', 2), [5, 10]);
    assert.equal(limiter.numRequeues('a'), 3);
    assert.equal(limiter.numRequeues('b'), 2);
    assert.equal(limiter.numRequeues('never'), 0);
  });

  it('forget starts the backoff over', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(5, 1000);
    delays(limiter, 'a', 5);
    limiter.forget('a');
    assert.equal(limiter.numRequeues('a'), 0);
    assert.equal(limiter.when('a'), 5);
  });

  it('defaults to 5 ms doubling up to 5 minutes and stays capped after overflow', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>();
    assert.deepEqual(delays(limiter, 'a', 3), [5, 10, 20]);
    const many = delays(limiter, 'a', 2000);
    assert.equal(many.at(-1), DEFAULT_MAX_DELAY_MS);
    assert.equal(DEFAULT_MAX_DELAY_MS, 300_000);
    assert.ok(many.every((delay) => Number.isFinite(delay) && delay <= DEFAULT_MAX_DELAY_MS));
  });

  it('a zero base delay never overflows into NaN', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(0, 100);
    const all = delays(limiter, 'a', 1200);
    assert.ok(all.every((delay) => delay === 0 || delay === 100));
  });
});

describe('BucketRateLimiter', () => {
  it('lets a burst through, then spaces requeues at 1/qps', () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter<string>(new TokenBucket(10, 100, clock));
    for (let i = 0; i < 100; i++) assert.equal(limiter.when(`item-${i}`), 0);
    assert.deepEqual(delays(limiter, 'x', 3), [100, 200, 300]);
    assert.equal(limiter.numRequeues('x'), 0);
  });
});

describe('MaxOfRateLimiter', () => {
  it('returns the longest delay of its limiters and forwards forget', () => {
    const clock = new FakeClock();
    const limiter = new MaxOfRateLimiter<string>(
      new ItemExponentialFailureRateLimiter<string>(1, 1000),
      new BucketRateLimiter<string>(new TokenBucket(1, 3, clock)),
    );
    // Bucket: 0, 0, 0, 1000, 2000. Exponential: 1, 2, 4, 8, 16.
    assert.deepEqual(delays(limiter, 'a', 5), [1, 2, 4, 1000, 2000]);
    assert.equal(limiter.numRequeues('a'), 5);
    limiter.forget('a');
    assert.equal(limiter.numRequeues('a'), 0);
  });

  it('rejects an empty list', () => {
    assert.throws(() => new MaxOfRateLimiter<string>(), RangeError);
  });
});

describe('defaultControllerRateLimiter', () => {
  it('combines 5 ms..5 min per-item backoff with a 10 qps / 100 burst bucket', () => {
    const clock = new FakeClock();
    const limiter = defaultControllerRateLimiter<string>(clock);
    assert.deepEqual(delays(limiter, 'a', 3), [5, 10, 20]);
    for (let i = 0; i < 97; i++) limiter.when(`other-${i}`);
    // The bucket is now empty: the overall limit (100 ms per token) outweighs the 5 ms item backoff.
    assert.equal(limiter.when('fresh'), 100);
    limiter.forget('a');
    assert.equal(limiter.numRequeues('a'), 0);
  });
});
