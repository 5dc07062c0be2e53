import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { Departures, mayHaveLostMarker } from '../../../src/controllers/basicreplicaset/logic/departures.ts';

describe('Departures', () => {
  it('holds a set back until its departed pod arrives in the other cache', () => {
    let now = 0;
    const d = new Departures(3000, () => now);
    d.departed('ns/web', 'a');
    now = 1000;
    assert.equal(d.waitFor('ns/web'), 2000);
    assert.equal(d.waitFor('ns/api'), 0, 'other sets are not held back');
    d.arrived('a');
    assert.equal(d.waitFor('ns/web'), 0);
  });

  it('gives up after the grace period: the pod really is gone', () => {
    let now = 0;
    const d = new Departures(3000, () => now);
    d.departed('ns/web', 'a');
    now = 3000;
    assert.equal(d.waitFor('ns/web'), 0);
    assert.equal(d.size, 0, 'expired entries are dropped');
  });

  it('forgets a deleted set', () => {
    const d = new Departures();
    d.departed('ns/web', 'a');
    d.departed('ns/api', 'b');
    d.forget('ns/web');
    assert.equal(d.waitFor('ns/web'), 0);
    assert.equal(d.size, 1);
  });
});

describe('mayHaveLostMarker (a pod gone from the marked cache)', () => {
  const pod = (extra: Partial<V1Pod> = {}): V1Pod => ({ metadata: { name: 'p', uid: 'u' }, ...extra });

  it('is a running pod that was not being deleted: it may only have lost the marker', () => {
    assert.equal(mayHaveLostMarker(pod({ status: { phase: 'Running' } }), false), true);
  });

  it('is not a pod whose deletion the set asked for: deleted at once (unscheduled) it has no deletion timestamp', () => {
    assert.equal(mayHaveLostMarker(pod({ status: { phase: 'Pending' } }), true), false);
  });

  it('is not a terminating or finished pod', () => {
    assert.equal(mayHaveLostMarker(pod({ metadata: { deletionTimestamp: new Date() } }), false), false);
    assert.equal(mayHaveLostMarker(pod({ status: { phase: 'Succeeded' } }), false), false);
    assert.equal(mayHaveLostMarker(pod({ status: { phase: 'Failed' } }), false), false);
  });
});
