import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PriorityThrottle } from '../../../src/runtime/client/priority-throttle.ts';
import { TokenBucket } from '../../../src/runtime/queue/token-bucket.ts';

describe('PriorityThrottle', () => {
  it('gives each token to a waiting high-priority request before any low-priority one', async () => {
    const throttle = new PriorityThrottle(new TokenBucket(200, 1));
    const order: string[] = [];
    const all = [
      ...['l1', 'l2', 'l3'].map((id) => throttle.acquire(undefined, 'low').then(() => order.push(id))),
      ...['h1', 'h2', 'h3'].map((id) => throttle.acquire(undefined, 'high').then(() => order.push(id))),
    ];
    await Promise.all(all);
    // Tokens are handed out when they become available, so requests queued in the same tick are
    // served high lane first.
    assert.deepEqual(order, ['h1', 'h2', 'h3', 'l1', 'l2', 'l3']);
  });

  it('keeps the bucket rate', async () => {
    const throttle = new PriorityThrottle(new TokenBucket(100, 1));
    const started = Date.now();
    await Promise.all(Array.from({ length: 11 }, () => throttle.acquire()));
    assert.ok(Date.now() - started >= 90, 'ten tokens after the first at 100 qps take about 100 ms');
  });

  it('an aborted waiter leaves its lane', async () => {
    const throttle = new PriorityThrottle(new TokenBucket(20, 1));
    await throttle.acquire();
    const controller = new AbortController();
    const waiting = throttle.acquire(controller.signal, 'low');
    controller.abort(new Error('gave up'));
    await assert.rejects(waiting, /gave up/);
    assert.deepEqual(throttle.waiting(), { high: 0, low: 0 });
  });
});
