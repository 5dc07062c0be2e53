import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DelayHeap } from '../../../src/runtime/queue/delay-heap.ts';

describe('DelayHeap', () => {
  it('pops ready items earliest first, ties in insertion order', () => {
    const heap = new DelayHeap<string>();
    const readyAt: Record<string, number> = { e: 50, a: 10, c: 30, b: 30, d: 40, f: 60 };
    for (const [item, at] of Object.entries(readyAt)) heap.schedule(item, at);
    assert.equal(heap.nextReadyAt(), 10);
    assert.deepEqual(heap.popReady(35), ['a', 'c', 'b']);
    assert.deepEqual(heap.popReady(1000), ['d', 'e', 'f']);
    assert.equal(heap.size, 0);
    assert.equal(heap.nextReadyAt(), undefined);
  });

  it('keeps the earlier time for an item scheduled twice', () => {
    const heap = new DelayHeap<string>();
    heap.schedule('x', 100);
    heap.schedule('y', 50);
    heap.schedule('x', 10);
    heap.schedule('x', 500);
    assert.equal(heap.size, 2);
    assert.deepEqual(heap.popReady(10), ['x']);
    assert.deepEqual(heap.popReady(100), ['y']);
  });

  it('stays ordered under many random schedules', () => {
    const heap = new DelayHeap<number>();
    const expected = new Map<number, number>();
    let seed = 17;
    const next = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let i = 0; i < 2000; i++) {
      const item = next() % 300;
      const at = next() % 10_000;
      heap.schedule(item, at);
      expected.set(item, Math.min(expected.get(item) ?? Number.POSITIVE_INFINITY, at));
    }
    const popped: number[] = [];
    for (let now = 0; heap.size > 0; now += 97) {
      for (const item of heap.popReady(now)) {
        assert.ok(expected.get(item)! <= now);
        assert.ok(expected.get(item)! > now - 97);
        popped.push(item);
      }
    }
    assert.equal(popped.length, expected.size);
  });
});
