import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, realClock } from '../../../src/runtime/queue/clock.ts';

describe('FakeClock', () => {
  it('fires due timers in due-time order, with now() at each due time', () => {
    const clock = new FakeClock(1000);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => fired.push(`a@${clock.now()}`), 10);
    clock.setTimeout(() => fired.push(`c@${clock.now()}`), 20);
    clock.setTimeout(() => fired.push('late'), 31);
    clock.advance(30);
    assert.deepEqual(fired, ['a@1010', 'b@1020', 'c@1020']);
    assert.equal(clock.now(), 1030);
    assert.equal(clock.pendingTimers(), 1);
  });

  it('fires timers scheduled by callbacks if they fall inside the advance', () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.now());
      clock.setTimeout(() => fired.push(clock.now()), 5);
    }, 5);
    clock.advance(10);
    assert.deepEqual(fired, [5, 10]);
  });

  it('does not fire cleared timers', () => {
    const clock = new FakeClock();
    let fired = false;
    const timer = clock.setTimeout(() => {
      fired = true;
    }, 1);
    clock.clearTimeout(timer);
    clock.advance(5);
    assert.equal(fired, false);
    assert.equal(clock.pendingTimers(), 0);
  });
});

describe('realClock', () => {
  it('fires a short timer and reports a monotonic now()', async () => {
    const start = realClock.now();
    await new Promise<void>((resolve) => realClock.setTimeout(resolve, 2, { keepAlive: true }));
    assert.ok(realClock.now() - start >= 1);
  });

  it('can cancel a timer', async () => {
    let fired = false;
    const timer = realClock.setTimeout(() => {
      fired = true;
    }, 1);
    realClock.clearTimeout(timer);
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(fired, false);
  });
});
