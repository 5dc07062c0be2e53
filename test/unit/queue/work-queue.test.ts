import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../src/runtime/queue/clock.ts';
import { ItemExponentialFailureRateLimiter } from '../../../src/runtime/queue/rate-limiters.ts';
import { WorkQueue } from '../../../src/runtime/queue/work-queue.ts';

/** Lets promise continuations (resolved get() calls, awaiting workers) run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Resolves to the value if the promise settles within a macrotask turn, else 'pending'. */
async function peek<T>(promise: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([promise, settle().then(() => 'pending' as const)]);
}

function newQueue(clock = new FakeClock()): WorkQueue {
  return new WorkQueue({ clock, rateLimiter: new ItemExponentialFailureRateLimiter(5, 1000) });
}

describe('WorkQueue basics', () => {
  it('hands items out in FIFO order', async () => {
    const queue = newQueue();
    queue.add('a');
    queue.add('b');
    queue.add('c');
    assert.equal(await queue.get(), 'a');
    assert.equal(await queue.get(), 'b');
    assert.equal(await queue.get(), 'c');
  });

  it('de-duplicates items that are already queued', async () => {
    const queue = newQueue();
    queue.add('ns/a');
    queue.add('ns/b');
    queue.add('ns/a');
    queue.add('ns/a');
    assert.equal(queue.len(), 2);
    assert.equal(await queue.get(), 'ns/a');
    assert.equal(await queue.get(), 'ns/b');
    assert.equal(queue.len(), 0);
  });

  it('get() waits for the next add', async () => {
    const queue = newQueue();
    const pending = queue.get();
    assert.equal(await peek(pending), 'pending');
    queue.add('x');
    assert.equal(await pending, 'x');
  });

  it('serves waiting workers in the order they called get()', async () => {
    const queue = newQueue();
    const first = queue.get();
    const second = queue.get();
    queue.add('a');
    queue.add('b');
    assert.equal(await first, 'a');
    assert.equal(await second, 'b');
  });

  it('re-adds an item added while processing only after done(), exactly once', async () => {
    const queue = newQueue();
    queue.add('a');
    const item = await queue.get();
    assert.equal(item, 'a');

    queue.add('a');
    queue.add('a');
    assert.equal(queue.len(), 0, 'an in-flight item is not queued again');
    const otherWorker = queue.get();
    assert.equal(await peek(otherWorker), 'pending', 'no second worker gets the in-flight item');

    queue.done('a');
    assert.equal(await otherWorker, 'a');
    assert.equal(queue.len(), 0, 'it was queued once, not twice');
    queue.done('a');
    assert.equal(await peek(queue.get()), 'pending');
  });

  it('does not requeue an item that was not added again while processing', async () => {
    const queue = newQueue();
    queue.add('a');
    await queue.get();
    queue.done('a');
    assert.equal(queue.len(), 0);
    assert.equal(queue.inFlight(), 0);
  });

  it('ignores done() for items that are not in flight', async () => {
    const queue = newQueue();
    queue.add('a');
    queue.done('a');
    queue.done('never-added');
    assert.equal(queue.len(), 1);
    assert.equal(await queue.get(), 'a');
    assert.equal(queue.len(), 0);
  });
});

describe('WorkQueue delayed adds', () => {
  it('adds after the delay, in ready-time order', async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.addAfter('late', 300);
    queue.addAfter('early', 100);
    queue.addAfter('middle', 200);
    assert.equal(queue.len(), 0);

    clock.advance(99);
    assert.equal(queue.len(), 0);
    clock.advance(1);
    assert.equal(queue.len(), 1);
    clock.advance(200);
    assert.equal(queue.len(), 3);
    assert.equal(await queue.get(), 'early');
    assert.equal(await queue.get(), 'middle');
    assert.equal(await queue.get(), 'late');
  });

  it('keeps the earliest time when the same item is scheduled twice', () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.addAfter('a', 1000);
    queue.addAfter('a', 100);
    queue.addAfter('a', 500);
    clock.advance(100);
    assert.equal(queue.len(), 1);
    clock.advance(1000);
    assert.equal(queue.len(), 1, 'later schedules were merged into the earliest');
    assert.equal(clock.pendingTimers(), 0);
  });

  it('adds immediately for a zero or negative delay', () => {
    const queue = newQueue();
    queue.addAfter('a', 0);
    queue.addAfter('b', -5);
    assert.equal(queue.len(), 2);
  });

  it('keeps a single timer armed for the earliest item', () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    for (let i = 0; i < 50; i++) queue.addAfter(`item-${i}`, 1000 - i);
    assert.equal(clock.pendingTimers(), 1);
    clock.advance(1000);
    assert.equal(queue.len(), 50);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('requeue-after while processing: the item comes back after done() once the delay passed', async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.add('a');
    const item = await queue.get();
    assert.equal(item, 'a');
    queue.addAfter('a', 50); // the reconciler asked to be called again in 50 ms
    clock.advance(50);
    assert.equal(queue.len(), 0, 'still in flight, so not handed out yet');
    queue.done('a');
    assert.equal(queue.len(), 1);
    assert.equal(await queue.get(), 'a');
  });

  it('requeue-after that fires after done() hands the item out again', async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.add('a');
    await queue.get();
    queue.addAfter('a', 50);
    queue.done('a');
    assert.equal(queue.len(), 0);
    const next = queue.get();
    clock.advance(50);
    assert.equal(await next, 'a');
  });

  it('a direct add does not cancel a pending delayed add (level-triggered: both run)', async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.addAfter('a', 100);
    queue.add('a');
    assert.equal(await queue.get(), 'a');
    queue.done('a');
    clock.advance(100);
    assert.equal(await queue.get(), 'a');
  });
});

describe('WorkQueue rate-limited adds', () => {
  it('backs off exponentially per item and forget resets it', async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.addRateLimited('a'); // 5 ms
    queue.addRateLimited('b'); // 5 ms
    queue.addRateLimited('a'); // earlier schedule (5 ms) wins over 10 ms
    assert.equal(queue.numRequeues('a'), 2);
    assert.equal(queue.numRequeues('b'), 1);
    clock.advance(5);
    assert.equal(queue.len(), 2);

    assert.equal(await queue.get(), 'a');
    queue.addRateLimited('a'); // third failure: 20 ms
    queue.done('a');
    clock.advance(19);
    assert.equal(queue.len(), 1, 'only b');
    clock.advance(1);
    assert.equal(queue.len(), 2);

    queue.forget('a');
    assert.equal(queue.numRequeues('a'), 0);
  });
});

describe('WorkQueue shutdown', () => {
  it('resolves pending and later get() calls with undefined and ignores adds', async () => {
    const queue = newQueue();
    const pending = queue.get();
    queue.shutDown();
    assert.equal(await pending, undefined);
    queue.add('a');
    queue.addAfter('b', 10);
    queue.addRateLimited('c');
    assert.equal(queue.len(), 0);
    assert.equal(await queue.get(), undefined);
  });

  it('stops handing out queued items and clears delay timers', async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.add('a');
    queue.addAfter('b', 1000);
    assert.equal(clock.pendingTimers(), 1);
    queue.shutDown();
    assert.equal(clock.pendingTimers(), 0);
    assert.equal(await queue.get(), undefined);
    clock.advance(1000);
    assert.equal(queue.len(), 0);
  });

  it('shutDownWithDrain waits for in-flight items', async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.add('a');
    queue.add('b');
    const a = await queue.get();
    const b = await queue.get();
    assert.ok(a && b);

    const drained = queue.shutDownWithDrain(10_000);
    assert.equal(await peek(drained), 'pending');
    assert.equal(await queue.get(), undefined, 'workers are told to stop while the drain runs');
    queue.done(a);
    assert.equal(await peek(drained), 'pending');
    queue.done(b);
    assert.equal(await drained, true);
    assert.equal(clock.pendingTimers(), 0, 'the drain timeout timer is cleared');
  });

  it('shutDownWithDrain resolves true at once when nothing is in flight', async () => {
    const queue = newQueue();
    queue.add('a');
    assert.equal(await queue.shutDownWithDrain(1000), true);
  });

  it('shutDownWithDrain gives up after the timeout', async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.add('stuck');
    await queue.get();
    const drained = queue.shutDownWithDrain(500);
    clock.advance(499);
    assert.equal(await peek(drained), 'pending');
    clock.advance(1);
    assert.equal(await drained, false);
  });

  it('shutDown during a drain ends the drain at once', async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.add('stuck');
    await queue.get();
    const drained = queue.shutDownWithDrain(60_000);
    queue.shutDown();
    assert.equal(await drained, false);
    assert.equal(clock.pendingTimers(), 0);
  });
});
