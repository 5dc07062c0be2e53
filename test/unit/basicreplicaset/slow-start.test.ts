import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BURST_REPLICAS,
  planReplicaChange,
  runSlowStart,
  slowStartBatchSizes,
} from '../../../src/controllers/basicreplicaset/logic/slow-start.ts';

describe('slowStartBatchSizes', () => {
  const cases: [count: number, initial: number, expected: number[]][] = [
    [0, 1, []],
    [1, 1, [1]],
    [3, 1, [1, 2]],
    [7, 1, [1, 2, 4]],
    [10, 1, [1, 2, 4, 3]],
    [500, 1, [1, 2, 4, 8, 16, 32, 64, 128, 245]],
    [10, 3, [3, 6, 1]],
    [2, 5, [2]],
  ];
  for (const [count, initial, expected] of cases) {
    it(`${count} starting at ${initial} -> ${expected.join(', ') || 'none'}`, () => {
      assert.deepEqual(slowStartBatchSizes(count, initial), expected);
    });
  }
});

describe('runSlowStart', () => {
  it('runs everything when nothing fails, passing each index once', async () => {
    const seen: number[] = [];
    const result = await runSlowStart(10, async (index) => {
      seen.push(index);
    });
    assert.deepEqual(result, { succeeded: 10, failed: 0, skipped: 0, errors: [] });
    assert.deepEqual(
      seen.sort((a, b) => a - b),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
  });

  it('stops after the first batch with a failure and counts the rest as skipped', async () => {
    const boom = new Error('quota exceeded');
    const called: number[] = [];
    // Batches of 10: [0], [1, 2], [3, 4, 5, 6], [7, 8, 9]; index 4 fails in the third batch.
    const result = await runSlowStart(10, async (index) => {
      called.push(index);
      if (index === 4) throw boom;
    });
    assert.deepEqual(result, { succeeded: 6, failed: 1, skipped: 3, errors: [boom] });
    assert.ok(called.every((index) => index <= 6));
  });

  it('a failing first call skips everything else', async () => {
    const result = await runSlowStart(5, async () => {
      throw new Error('invalid template');
    });
    assert.equal(result.succeeded, 0);
    assert.equal(result.failed, 1);
    assert.equal(result.skipped, 4);
  });

  it('collects every failure of the failing batch', async () => {
    const result = await runSlowStart(7, async (index) => {
      if (index >= 1) throw new Error(`fail ${index}`);
    });
    assert.deepEqual([result.succeeded, result.failed, result.skipped], [1, 2, 4]);
    assert.equal(result.errors.length, 2);
  });

  it('runs the calls of a batch concurrently, one batch at a time', async () => {
    let running = 0;
    const peaks: number[] = [];
    await runSlowStart(7, async () => {
      running += 1;
      peaks.push(running);
      await Promise.resolve();
      running -= 1;
    });
    assert.equal(Math.max(...peaks), 4);
    assert.equal(running, 0);
  });

  it('does nothing for 0', async () => {
    assert.deepEqual(await runSlowStart(0, async () => undefined), {
      succeeded: 0,
      failed: 0,
      skipped: 0,
      errors: [],
    });
  });
});

describe('planReplicaChange', () => {
  it('creates or deletes the difference, at most a burst', () => {
    assert.equal(BURST_REPLICAS, 500);
    assert.deepEqual(planReplicaChange(3, 5), { create: 2, delete: 0 });
    assert.deepEqual(planReplicaChange(5, 3), { create: 0, delete: 2 });
    assert.deepEqual(planReplicaChange(4, 4), { create: 0, delete: 0 });
    assert.deepEqual(planReplicaChange(0, 1200), { create: 500, delete: 0 });
    assert.deepEqual(planReplicaChange(900, 0), { create: 0, delete: 500 });
    assert.deepEqual(planReplicaChange(0, 10, 4), { create: 4, delete: 0 });
  });
});
