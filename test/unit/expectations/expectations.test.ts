import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import winston from 'winston';
import {
  ControllerExpectations,
  EXPECTATIONS_TIMEOUT_MS,
  type ExpectationsSnapshot,
} from '../../../src/runtime/expectations.ts';
import { FakeClock } from '../../../src/runtime/queue/clock.ts';

const KEY = 'ns/web-abc';
const silent = winston.createLogger({ silent: true });

function setup(options: { ttlMs?: number } = {}) {
  const clock = new FakeClock(1_000);
  const expired: [string, ExpectationsSnapshot][] = [];
  const expectations = new ControllerExpectations({
    ...options,
    clock,
    log: silent,
    onExpired: (key, snapshot) => expired.push([key, snapshot]),
  });
  return { clock, expectations, expired };
}

describe('ControllerExpectations', () => {
  it('is satisfied when nothing was ever recorded', () => {
    const { expectations } = setup();
    assert.equal(expectations.satisfied(KEY), true);
    assert.equal(expectations.get(KEY), undefined);
  });

  it('waits for every expected creation to be observed', () => {
    const { expectations } = setup();
    expectations.expectCreations(KEY, 2);
    assert.equal(expectations.satisfied(KEY), false);
    expectations.creationObserved(KEY);
    assert.equal(expectations.satisfied(KEY), false);
    expectations.creationObserved(KEY);
    assert.equal(expectations.satisfied(KEY), true);
    assert.equal(expectations.get(KEY)?.adds, 0);
  });

  it('keeps keys apart', () => {
    const { expectations } = setup();
    expectations.expectCreations(KEY, 1);
    expectations.creationObserved('ns/other');
    assert.equal(expectations.satisfied(KEY), false);
    assert.equal(expectations.satisfied('ns/other'), true);
  });

  it('lowers expectations for creations that failed and will never be observed', () => {
    const { expectations } = setup();
    expectations.expectCreations(KEY, 5);
    expectations.creationObserved(KEY);
    expectations.creationObserved(KEY);
    expectations.lowerExpectations(KEY, 3);
    assert.equal(expectations.satisfied(KEY), true);
  });

  it('lets counts go below zero and stays satisfied', () => {
    const { expectations } = setup();
    expectations.expectCreations(KEY, 1);
    expectations.creationObserved(KEY);
    expectations.creationObserved(KEY);
    assert.equal(expectations.get(KEY)?.adds, -1);
    assert.equal(expectations.satisfied(KEY), true);
  });

  it('raises expectations on an existing record only', () => {
    const { expectations } = setup();
    expectations.raiseExpectations(KEY, 1);
    assert.equal(expectations.get(KEY), undefined);
    expectations.expectCreations(KEY, 0);
    assert.equal(expectations.satisfied(KEY), true);
    expectations.raiseExpectations(KEY, 2, 1);
    assert.deepEqual([expectations.get(KEY)?.adds, expectations.get(KEY)?.deletes], [2, 1]);
    assert.equal(expectations.satisfied(KEY), false);
  });

  it('ignores observations and lowering for keys without a record', () => {
    const { expectations } = setup();
    expectations.creationObserved(KEY);
    expectations.deletionObserved(KEY, 'uid-1');
    expectations.lowerExpectations(KEY, 1, 1);
    assert.equal(expectations.get(KEY), undefined);
  });

  describe('deletions, tracked by UID', () => {
    it('counts a deletion observed twice only once', () => {
      const { expectations } = setup();
      expectations.expectDeletions(KEY, ['uid-1', 'uid-2']);
      expectations.deletionObserved(KEY, 'uid-1'); // deletionTimestamp set
      expectations.deletionObserved(KEY, 'uid-1'); // the delete event itself
      assert.equal(expectations.satisfied(KEY), false);
      assert.deepEqual(expectations.get(KEY)?.pendingDeletions, ['uid-2']);
      expectations.deletionObserved(KEY, 'uid-2');
      assert.equal(expectations.satisfied(KEY), true);
      assert.equal(expectations.get(KEY)?.deletes, 0);
    });

    it('ignores deletions it did not ask for', () => {
      const { expectations } = setup();
      expectations.expectDeletions(KEY, ['uid-1']);
      expectations.deletionObserved(KEY, 'someone-elses');
      assert.equal(expectations.satisfied(KEY), false);
      assert.equal(expectations.get(KEY)?.deletes, 1);
    });

    it('counts duplicate UIDs in the request once', () => {
      const { expectations } = setup();
      expectations.expectDeletions(KEY, ['uid-1', 'uid-1', 'uid-2']);
      assert.equal(expectations.get(KEY)?.deletes, 2);
    });

    it('treats an empty deletion list as satisfied', () => {
      const { expectations } = setup();
      expectations.expectDeletions(KEY, []);
      assert.equal(expectations.satisfied(KEY), true);
    });
  });

  it('replaces earlier expectations when new ones are recorded', () => {
    const { expectations } = setup();
    expectations.expectDeletions(KEY, ['uid-1']);
    expectations.expectCreations(KEY, 1);
    assert.deepEqual(expectations.get(KEY), { adds: 1, deletes: 0, pendingDeletions: [], recordedAt: 1_000 });
    expectations.deletionObserved(KEY, 'uid-1');
    assert.equal(expectations.get(KEY)?.deletes, 0);
    expectations.expectDeletions(KEY, ['uid-3']);
    assert.equal(expectations.get(KEY)?.adds, 0);
  });

  it('forgets a key on deleteExpectations', () => {
    const { expectations } = setup();
    expectations.expectCreations(KEY, 3);
    expectations.deleteExpectations(KEY);
    assert.equal(expectations.get(KEY), undefined);
    assert.equal(expectations.satisfied(KEY), true);
  });

  describe('TTL', () => {
    it('expires unmet expectations after 5 minutes (strictly more) and reports it', () => {
      const { clock, expectations, expired } = setup();
      expectations.expectCreations(KEY, 2);
      expectations.creationObserved(KEY);
      clock.advance(EXPECTATIONS_TIMEOUT_MS);
      assert.equal(expectations.satisfied(KEY), false);
      assert.deepEqual(expired, []);
      clock.advance(1);
      assert.equal(expectations.satisfied(KEY), true);
      assert.deepEqual(expired, [[KEY, { adds: 1, deletes: 0, pendingDeletions: [], recordedAt: 1_000 }]]);
    });

    it('measures from when expectations were recorded, not from the last observation', () => {
      const { clock, expectations } = setup({ ttlMs: 1_000 });
      expectations.expectCreations(KEY, 3);
      clock.advance(900);
      expectations.creationObserved(KEY);
      clock.advance(101);
      assert.equal(expectations.satisfied(KEY), true);
    });

    it('restarts the clock when expectations are recorded again', () => {
      const { clock, expectations, expired } = setup({ ttlMs: 1_000 });
      expectations.expectCreations(KEY, 1);
      clock.advance(2_000);
      assert.equal(expectations.satisfied(KEY), true);
      expectations.expectCreations(KEY, 1);
      assert.equal(expectations.satisfied(KEY), false);
      assert.equal(expired.length, 1);
    });

    it('does not report fulfilled expectations as expired', () => {
      const { clock, expectations, expired } = setup();
      expectations.expectCreations(KEY, 1);
      expectations.creationObserved(KEY);
      clock.advance(EXPECTATIONS_TIMEOUT_MS * 2);
      assert.equal(expectations.satisfied(KEY), true);
      assert.deepEqual(expired, []);
    });
  });
});
