import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClaimedArrivals } from '../../../src/controllers/basicreplicaset/logic/claimed-arrivals.ts';

describe('ClaimedArrivals', () => {
  it('recognises a claimed pod once', () => {
    const arrivals = new ClaimedArrivals();
    arrivals.expect('ns/web', 'a');
    assert.equal(arrivals.take('b'), false);
    assert.equal(arrivals.take('a'), true);
    assert.equal(arrivals.take('a'), false, 'a second add of the same pod is not a claim');
  });

  it('forgets a claim that did not happen', () => {
    const arrivals = new ClaimedArrivals();
    arrivals.expect('ns/web', 'a');
    arrivals.forget('a');
    assert.equal(arrivals.take('a'), false);
    assert.equal(arrivals.waitFor('ns/web'), 0);
  });

  it('awaits a pod claimed twice once: one arrival ends the wait', () => {
    let now = 0;
    const arrivals = new ClaimedArrivals(1000, () => now);
    assert.equal(arrivals.expect('ns/web', 'a'), true);
    now = 10;
    assert.equal(arrivals.expect('ns/web', 'a'), false, 'already awaited');
    assert.equal(arrivals.expect('ns/other', 'a'), false, 'awaited for the set that claimed it first');
    assert.equal(arrivals.waitFor('ns/web'), 990);
    assert.equal(arrivals.waitFor('ns/other'), 0);
    assert.equal(arrivals.take('a'), true);
    assert.equal(arrivals.waitFor('ns/web'), 0);
  });

  it('tells each set how long it still waits, and forgets a deleted set', () => {
    let now = 0;
    const arrivals = new ClaimedArrivals(1000, () => now);
    arrivals.expect('ns/web', 'a');
    now = 300;
    arrivals.expect('ns/web', 'b');
    arrivals.expect('ns/api', 'c');
    assert.equal(arrivals.waitFor('ns/web'), 1000, 'until the later claim expires');
    arrivals.forgetSet('ns/web');
    assert.equal(arrivals.waitFor('ns/web'), 0);
    assert.equal(arrivals.waitFor('ns/api'), 1000);
  });

  it('lets claims expire, so arrivals never seen neither stall a set nor pile up', () => {
    let now = 0;
    const arrivals = new ClaimedArrivals(1000, () => now);
    arrivals.expect('ns/web', 'a');
    now = 2000;
    assert.equal(arrivals.waitFor('ns/web'), 0);
    assert.equal(arrivals.take('a'), false, 'too late to be that claim');
    arrivals.expect('ns/web', 'b');
    now = 4000;
    arrivals.expect('ns/web', 'c');
    assert.equal(arrivals.size, 1, 'the expired claim of b was dropped');
  });
});
