import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClaimedArrivals } from '../../../src/controllers/basicreplicaset/logic/claimed-arrivals.ts';

describe('ClaimedArrivals', () => {
  it('recognises a claimed pod once', () => {
    const arrivals = new ClaimedArrivals();
    arrivals.expect('a');
    assert.equal(arrivals.take('b'), false);
    assert.equal(arrivals.take('a'), true);
    assert.equal(arrivals.take('a'), false, 'a second add of the same pod is not a claim');
  });

  it('forgets a claim that did not happen', () => {
    const arrivals = new ClaimedArrivals();
    arrivals.expect('a');
    arrivals.forget('a');
    assert.equal(arrivals.take('a'), false);
  });

  it('lets claims expire, so arrivals never seen do not pile up', () => {
    let now = 0;
    const arrivals = new ClaimedArrivals(1000, () => now);
    arrivals.expect('a');
    now = 2000;
    assert.equal(arrivals.take('a'), false, 'too late to be that claim');
    arrivals.expect('b');
    now = 4000;
    arrivals.expect('c');
    assert.equal(arrivals.size, 1, 'the expired claim of b was dropped');
  });
});
