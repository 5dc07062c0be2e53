import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../src/runtime/queue/clock.ts';
import { ItemExponentialFailureRateLimiter } from '../../../src/runtime/queue/rate-limiters.ts';
import { WorkQueue } from '../../../src/runtime/queue/work-queue.ts';

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** mulberry32: a tiny seeded PRNG so every run of this test replays the same schedule. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface RunStats {
  processed: number;
  maxConcurrent: number;
}

/**
 * Random adds, delayed adds and rate-limited requeues race N async workers that take a random number
 * of event-loop turns per item and sometimes re-add keys (their own or others) while working.
 */
async function runRandomSchedule(seed: number, workerCount: number, operations: number): Promise<RunStats> {
  const random = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
  const keys = Array.from({ length: 12 }, (_, i) => `ns/key-${i}`);
  const clock = new FakeClock();
  const queue = new WorkQueue({ clock, rateLimiter: new ItemExponentialFailureRateLimiter(1, 50) });

  const inFlight = new Set<string>();
  let event = 0;
  const lastAddRequest = new Map<string, number>();
  const lastStart = new Map<string, number>();
  const stats: RunStats = { processed: 0, maxConcurrent: 0 };

  const enqueueRandomly = (key: string): void => {
    lastAddRequest.set(key, ++event);
    const choice = random();
    if (choice < 0.6) queue.add(key);
    else if (choice < 0.8) queue.addAfter(key, Math.floor(random() * 30));
    else queue.addRateLimited(key);
  };

  const worker = async (): Promise<void> => {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      assert.ok(!inFlight.has(key), `${key} handed to two workers at once (seed ${seed})`);
      inFlight.add(key);
      stats.maxConcurrent = Math.max(stats.maxConcurrent, inFlight.size);
      lastStart.set(key, ++event);
      stats.processed++;
      const turns = Math.floor(random() * 4);
      for (let i = 0; i < turns; i++) await settle();
      if (random() < 0.3) enqueueRandomly(random() < 0.5 ? key : pick(keys));
      if (random() < 0.5) queue.forget(key);
      inFlight.delete(key);
      queue.done(key);
    }
  };
  const workers = Array.from({ length: workerCount }, worker);

  for (let i = 0; i < operations; i++) {
    enqueueRandomly(pick(keys));
    if (random() < 0.3) await settle();
    if (random() < 0.2) clock.advance(Math.floor(random() * 10));
  }

  // Let everything pending (queued, in flight, delayed) run to completion.
  for (let round = 0; round < 10_000; round++) {
    if (queue.len() === 0 && queue.inFlight() === 0 && clock.pendingTimers() === 0) break;
    clock.advance(100);
    await settle();
  }
  assert.equal(queue.len() + queue.inFlight() + clock.pendingTimers(), 0, 'queue went idle');

  for (const [key, addedAt] of lastAddRequest) {
    const startedAt = lastStart.get(key) ?? 0;
    assert.ok(startedAt > addedAt, `${key} was added after its last processing started (seed ${seed})`);
  }

  queue.shutDown();
  await Promise.all(workers);
  return stats;
}

describe('WorkQueue with concurrent workers', () => {
  for (const seed of [1, 7, 42, 1234, 99_991]) {
    it(`never hands one key to two workers and loses no add (seed ${seed})`, async () => {
      const stats = await runRandomSchedule(seed, 6, 1500);
      assert.ok(stats.processed > 100, `processed ${stats.processed}`);
      assert.ok(stats.maxConcurrent > 1, 'workers really overlapped');
    });
  }
});
