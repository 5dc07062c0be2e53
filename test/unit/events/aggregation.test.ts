import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  aggregationKey,
  continuesSeries,
  DEFAULT_SERIES_WINDOW_MS,
  EventAggregator,
  referenceKey,
} from '../../../src/runtime/events/aggregation.ts';
import type { EventOccurrence } from '../../../src/runtime/events/event-object.ts';
import { FakeClock } from '../../../src/runtime/queue/clock.ts';

const base: EventOccurrence = {
  regarding: { kind: 'Pod', namespace: 'ns', name: 'p1', uid: 'uid-1' },
  type: 'Normal',
  reason: 'SuccessfulCreate',
  action: 'Create',
  note: 'Created pod p1',
};

function setup(options: { windowMs?: number; maxSeries?: number } = {}) {
  const clock = new FakeClock(0);
  const epoch = Date.parse('2024-05-01T00:00:00Z');
  const aggregator = new EventAggregator({
    ...options,
    clock,
    wallClock: () => new Date(epoch + clock.now()),
  });
  return { clock, aggregator, epoch };
}

describe('aggregationKey', () => {
  it('is the same for identical occurrences, even with a different resourceVersion', () => {
    assert.equal(
      aggregationKey(base),
      aggregationKey({ ...base, regarding: { ...base.regarding, resourceVersion: '99' } }),
    );
  });

  it('differs when object, reason, action, type or note differ', () => {
    const variants: EventOccurrence[] = [
      { ...base, regarding: { ...base.regarding, uid: 'uid-2' } },
      { ...base, reason: 'FailedCreate' },
      { ...base, action: 'Delete' },
      { ...base, type: 'Warning' },
      { ...base, note: 'Created pod p2' },
    ];
    const keys = new Set([aggregationKey(base), ...variants.map(aggregationKey)]);
    assert.equal(keys.size, variants.length + 1);
  });

  it('falls back to object coordinates when there is no uid', () => {
    assert.equal(referenceKey({ kind: 'Node', name: 'n1' }), referenceKey({ kind: 'Node', name: 'n1' }));
    assert.notEqual(referenceKey({ kind: 'Node', name: 'n1' }), referenceKey({ kind: 'Node', name: 'n2' }));
    assert.equal(referenceKey(base.regarding), 'uid-1');
  });
});

describe('continuesSeries', () => {
  it('is true up to and including the window', () => {
    assert.equal(continuesSeries(1_000, 1_000 + DEFAULT_SERIES_WINDOW_MS, DEFAULT_SERIES_WINDOW_MS), true);
    assert.equal(continuesSeries(1_000, 1_001 + DEFAULT_SERIES_WINDOW_MS, DEFAULT_SERIES_WINDOW_MS), false);
  });
});

describe('EventAggregator', () => {
  it('opens a series of one for a first occurrence', () => {
    const { aggregator, epoch } = setup();
    const { series, isNew } = aggregator.observe(base);
    assert.equal(isNew, true);
    assert.equal(series.count, 1);
    assert.equal(series.writtenCount, 0);
    assert.equal(series.eventName, undefined);
    assert.deepEqual(series.firstObserved, new Date(epoch));
  });

  it('folds repeats within the window into the same series', () => {
    const { clock, aggregator, epoch } = setup();
    const first = aggregator.observe(base).series;
    clock.advance(60_000);
    const second = aggregator.observe({ ...base }); // equal, not identical
    clock.advance(9 * 60_000);
    const third = aggregator.observe(base);
    assert.equal(second.isNew, false);
    assert.equal(second.series, first);
    assert.equal(third.series, first);
    assert.equal(first.count, 3);
    assert.deepEqual(first.firstObserved, new Date(epoch));
    assert.deepEqual(first.lastObserved, new Date(epoch + 10 * 60_000));
  });

  it('keeps a series open as long as repeats keep coming within the window of each other', () => {
    const { clock, aggregator } = setup({ windowMs: 1_000 });
    const first = aggregator.observe(base).series;
    for (let i = 0; i < 5; i++) {
      clock.advance(900);
      assert.equal(aggregator.observe(base).series, first);
    }
    assert.equal(first.count, 6);
  });

  it('starts a new series after the window passes without a repeat', () => {
    const { clock, aggregator } = setup({ windowMs: 1_000 });
    const first = aggregator.observe(base).series;
    clock.advance(1_001);
    const next = aggregator.observe(base);
    assert.equal(next.isNew, true);
    assert.notEqual(next.series, first);
    assert.equal(next.series.count, 1);
  });

  it('keeps different occurrences in different series', () => {
    const { aggregator } = setup();
    const a = aggregator.observe(base).series;
    const b = aggregator.observe({ ...base, note: 'other' }).series;
    assert.notEqual(a, b);
    assert.equal(aggregator.size, 2);
  });

  it('forgets closed series and, past maxSeries, the least recently observed', () => {
    const { clock, aggregator } = setup({ windowMs: 1_000, maxSeries: 2 });
    aggregator.observe({ ...base, note: 'a' });
    clock.advance(10);
    const b = aggregator.observe({ ...base, note: 'b' }).series;
    clock.advance(10);
    aggregator.observe({ ...base, note: 'a' }); // a is now the most recent
    aggregator.observe({ ...base, note: 'c' }); // evicts b
    assert.equal(aggregator.size, 2);
    assert.notEqual(aggregator.observe({ ...base, note: 'b' }).series, b);
    clock.advance(5_000);
    aggregator.observe({ ...base, note: 'd' });
    assert.equal(aggregator.size, 1);
  });
});
