import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../src/runtime/queue/clock.ts';
import { TokenBucket } from '../../../src/runtime/queue/token-bucket.ts';

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('TokenBucket.take', () => {
  it('starts full, then reserves future tokens at 1/qps spacing', () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket(10, 3, clock);
    assert.deepEqual([bucket.take(), bucket.take(), bucket.take()], [0, 0, 0]);
    assert.deepEqual([bucket.take(), bucket.take()], [100, 200]);
    assert.equal(bucket.available(), -2);
  });

  it('refills with time, never beyond burst', () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket(10, 3, clock);
    for (let i = 0; i < 3; i++) bucket.take();
    clock.advance(150);
    assert.equal(bucket.available(), 1.5);
    assert.equal(bucket.take(), 0);
    assert.equal(bucket.take(), 50);
    clock.advance(60_000);
    assert.equal(bucket.available(), 3);
  });

  it('never limits at infinite qps', () => {
    const bucket = new TokenBucket(Number.POSITIVE_INFINITY, 1, new FakeClock());
    for (let i = 0; i < 1000; i++) assert.equal(bucket.take(), 0);
  });

  it('rejects nonsense settings', () => {
    assert.throws(() => new TokenBucket(0, 1), RangeError);
    assert.throws(() => new TokenBucket(5, 0), RangeError);
    assert.throws(() => new TokenBucket(Number.NaN, 1), RangeError);
  });
});

describe('TokenBucket.acquire', () => {
  it('resolves at once while tokens remain, otherwise after the reserved wait', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket(2, 1, clock);
    await bucket.acquire();
    let acquired = false;
    const waiting = bucket.acquire().then(() => {
      acquired = true;
    });
    clock.advance(499);
    await settle();
    assert.equal(acquired, false);
    clock.advance(1);
    await waiting;
    assert.equal(acquired, true);
  });

  it('rejects with the abort reason and gives back an unused last reservation', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket(1, 1, clock);
    bucket.take();
    const controller = new AbortController();
    const waiting = bucket.acquire(controller.signal);
    assert.equal(bucket.available(), -1);
    controller.abort(new Error('stopping'));
    await assert.rejects(waiting, /stopping/);
    assert.equal(bucket.available(), 0);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('does not give back a token that later reservations already counted on', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket(1, 1, clock);
    bucket.take();
    const controller = new AbortController();
    const first = bucket.acquire(controller.signal); // acts at 1000 ms
    bucket.take(); // acts at 2000 ms, priced as if the first one happens
    controller.abort(new Error('stop'));
    await assert.rejects(first, /stop/);
    assert.equal(bucket.available(), -2);
  });

  it('rejects without taking a token when the signal is already aborted', async () => {
    const bucket = new TokenBucket(1, 1, new FakeClock());
    await assert.rejects(bucket.acquire(AbortSignal.abort(new Error('gone'))), /gone/);
    assert.equal(bucket.available(), 1);
  });
});
