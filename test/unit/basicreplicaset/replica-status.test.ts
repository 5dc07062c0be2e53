import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  computeReplicaCounts,
  nextAvailabilityCheckIn,
} from '../../../src/controllers/basicreplicaset/logic/replica-status.ts';
import { pod } from './pods.ts';

const NOW = Date.UTC(2024, 5, 1, 12, 0, 0);

describe('computeReplicaCounts', () => {
  const pods = [
    pod('available', { node: 'n1', readySince: NOW - 60_000 }),
    pod('warming-up', { node: 'n1', readySince: NOW - 2000 }),
    pod('not-ready', { node: 'n1' }),
    pod('pending', { phase: 'Pending' }),
    pod('terminating-ready', { node: 'n1', readySince: NOW - 60_000, deleting: true }),
    pod('succeeded', { node: 'n1', phase: 'Succeeded' }),
    pod('failed', { node: 'n1', phase: 'Failed', deleting: true }),
  ];

  it('counts active (as replicas too), terminating, ready and available pods', () => {
    // Upstream calculateStatus: status.replicas is the active pods only, so the scale subresource
    // and an HPA never count a pod that is going away; terminating pods have a count of their own.
    assert.deepEqual(computeReplicaCounts(pods, 10, NOW), {
      replicas: 4,
      activeReplicas: 4,
      terminatingReplicas: 1,
      readyReplicas: 2,
      availableReplicas: 1,
    });
  });
  it('makes every ready pod available with minReadySeconds 0', () => {
    assert.equal(computeReplicaCounts(pods, 0, NOW).availableReplicas, 2);
  });
  it('is all zeros for no pods', () => {
    assert.deepEqual(computeReplicaCounts([], 0, NOW), {
      replicas: 0,
      activeReplicas: 0,
      terminatingReplicas: 0,
      readyReplicas: 0,
      availableReplicas: 0,
    });
  });
});

describe('nextAvailabilityCheckIn', () => {
  it('is the soonest moment an active ready pod becomes available', () => {
    const pods = [
      pod('a', { node: 'n1', readySince: NOW - 2000 }),
      pod('b', { node: 'n1', readySince: NOW - 7000 }),
      pod('c', { node: 'n1', readySince: NOW - 9500, deleting: true }),
      pod('d', { node: 'n1' }),
    ];
    assert.equal(nextAvailabilityCheckIn(pods, 10, NOW), 3001);
  });
  it('is undefined when nothing waits on minReadySeconds', () => {
    assert.equal(
      nextAvailabilityCheckIn([pod('a', { node: 'n1', readySince: NOW - 2000 })], 0, NOW),
      undefined,
    );
    assert.equal(
      nextAvailabilityCheckIn([pod('a', { node: 'n1', readySince: NOW - 20_000 })], 10, NOW),
      undefined,
    );
    assert.equal(nextAvailabilityCheckIn([pod('a')], 10, NOW), undefined);
  });
});
