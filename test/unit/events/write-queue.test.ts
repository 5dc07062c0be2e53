import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoalescingWriteQueue } from '../../../src/runtime/events/write-queue.ts';
import { FakeClock } from '../../../src/runtime/queue/clock.ts';

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A write function whose calls complete only when the test releases them. */
function controlledWrites() {
  const written: string[] = [];
  const releases: (() => void)[] = [];
  const write = (item: string): Promise<void> => {
    written.push(item);
    return new Promise((resolve) => releases.push(resolve));
  };
  const releaseNext = async (): Promise<void> => {
    releases.shift()?.();
    await settle();
  };
  return { written, write, releaseNext };
}

describe('CoalescingWriteQueue', () => {
  it('writes items one at a time in order', async () => {
    const { written, write, releaseNext } = controlledWrites();
    const queue = new CoalescingWriteQueue<string>({ write });
    queue.enqueue('a', 'a1');
    queue.enqueue('b', 'b1');
    assert.deepEqual(written, ['a1']);
    await releaseNext();
    assert.deepEqual(written, ['a1', 'b1']);
    await releaseNext();
    await queue.drain();
  });

  it('coalesces a waiting key into one write of the latest item', async () => {
    const { written, write, releaseNext } = controlledWrites();
    const queue = new CoalescingWriteQueue<string>({ write });
    queue.enqueue('a', 'a1');
    queue.enqueue('b', 'b1');
    queue.enqueue('b', 'b2');
    queue.enqueue('b', 'b3');
    assert.equal(queue.pending, 1);
    await releaseNext();
    await releaseNext();
    await queue.drain();
    assert.deepEqual(written, ['a1', 'b3']);
  });

  it('writes a key again when it is enqueued while being written', async () => {
    const { written, write, releaseNext } = controlledWrites();
    const queue = new CoalescingWriteQueue<string>({ write });
    queue.enqueue('a', 'a1');
    queue.enqueue('a', 'a2');
    queue.enqueue('a', 'a3');
    assert.deepEqual(written, ['a1']);
    await releaseNext();
    assert.deepEqual(written, ['a1', 'a3']);
    await releaseNext();
    await queue.drain();
    assert.deepEqual(written, ['a1', 'a3']);
  });

  it('refuses new keys beyond maxQueued, but still coalesces known ones', async () => {
    const { written, write, releaseNext } = controlledWrites();
    const queue = new CoalescingWriteQueue<string>({ write, maxQueued: 1 });
    assert.equal(queue.enqueue('a', 'a1'), true); // in flight, not waiting
    assert.equal(queue.enqueue('b', 'b1'), true);
    assert.equal(queue.enqueue('c', 'c1'), false);
    assert.equal(queue.enqueue('b', 'b2'), true);
    await releaseNext();
    await releaseNext();
    await queue.drain();
    assert.deepEqual(written, ['a1', 'b2']);
  });

  it('reports failures and carries on; a throwing error handler cannot stop it', async () => {
    const failures: string[] = [];
    const done: string[] = [];
    const queue = new CoalescingWriteQueue<string>({
      write: async (item) => {
        if (item.startsWith('bad')) throw new Error(`cannot write ${item}`);
        done.push(item);
      },
      onError: (err, item) => {
        failures.push(`${item}: ${(err as Error).message}`);
        throw new Error('handler broke');
      },
    });
    queue.enqueue('1', 'bad1');
    queue.enqueue('2', 'good');
    await queue.drain();
    assert.deepEqual(failures, ['bad1: cannot write bad1']);
    assert.deepEqual(done, ['good']);
  });

  it('drain resolves at once when idle', async () => {
    const queue = new CoalescingWriteQueue<string>({ write: async () => {} });
    await queue.drain();
  });

  /** A queue delaying each write 20 ms, on a clock the test moves (and lets the queue catch up). */
  function delayedQueue() {
    const { written, write, releaseNext } = controlledWrites();
    const clock = new FakeClock();
    const queue = new CoalescingWriteQueue<string>({ write, delayMs: 20, clock });
    const advance = async (ms: number) => {
      clock.advance(ms);
      await settle();
    };
    return { written, releaseNext, queue, advance };
  }

  it('writes a key delayMs after it is enqueued, with what was enqueued for it meanwhile', async () => {
    const { written, releaseNext, queue, advance } = delayedQueue();
    queue.enqueue('a', 'a1');
    await advance(10);
    queue.enqueue('b', 'b1');
    queue.enqueue('a', 'a2');
    await advance(9);
    assert.deepEqual(written, []);
    await advance(1);
    assert.deepEqual(written, ['a2']);
    await releaseNext();
    assert.deepEqual(written, ['a2'], 'b waits its own 20 ms');
    await advance(10);
    assert.deepEqual(written, ['a2', 'b1']);
    await releaseNext();
    await queue.drain();
  });

  it('delays a rewrite of the key in flight from when it was enqueued', async () => {
    const { written, releaseNext, queue, advance } = delayedQueue();
    queue.enqueue('a', 'a1');
    await advance(20);
    queue.enqueue('a', 'a2');
    await advance(5);
    await releaseNext();
    assert.deepEqual(written, ['a1']);
    await advance(15);
    assert.deepEqual(written, ['a1', 'a2']);
    await releaseNext();
    await queue.drain();
  });

  it('drain sends the writes still waiting for their delay at once, and those enqueued meanwhile', async () => {
    const written: string[] = [];
    const clock = new FakeClock();
    const queue = new CoalescingWriteQueue<string>({
      write: async (item) => {
        written.push(item);
      },
      delayMs: 60_000,
      clock,
    });
    queue.enqueue('a', 'a1');
    const drained = queue.drain();
    queue.enqueue('b', 'b1'); // recorded during shutdown: no wait either
    await drained;
    assert.deepEqual(written, ['a1', 'b1']);
    assert.equal(clock.pendingTimers(), 0);
  });
});
