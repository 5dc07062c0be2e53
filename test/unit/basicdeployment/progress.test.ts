import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type DeploymentStatusCounts,
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  ProgressReason,
  progressDeadlineRequeue,
  requeueFor,
} from '../../../src/controllers/basicdeployment/logic/progress.ts';

const counts = (
  replicas: number,
  updatedReplicas: number,
  readyReplicas: number,
  availableReplicas: number,
): DeploymentStatusCounts => ({
  replicas,
  updatedReplicas,
  readyReplicas,
  availableReplicas,
});

describe('deploymentComplete', () => {
  const cases: [
    name: string,
    desired: number,
    current: number,
    updated: number,
    available: number,
    expected: boolean,
  ][] = [
    ['not complete: min but not all pods become available', 5, 5, 5, 4, false],
    ['not complete: min availability is not honored', 5, 5, 5, 3, false],
    ['complete', 5, 5, 5, 5, true],
    ['not complete: all pods are available but not updated', 5, 5, 4, 5, false],
    ['not complete: still running old pods', 1, 2, 1, 1, false],
    ['not complete: one replica deployment never comes up', 1, 1, 1, 0, false],
  ];
  for (const [name, desired, current, updated, available, expected] of cases) {
    it(name, () => {
      assert.equal(
        deploymentComplete(desired, 1, { ...counts(current, updated, 0, available), observedGeneration: 1 }),
        expected,
      );
    });
  }
  it('needs the status to describe the current generation', () => {
    assert.equal(deploymentComplete(5, 3, { ...counts(5, 5, 5, 5), observedGeneration: 2 }), false);
    assert.equal(deploymentComplete(5, 3, { ...counts(5, 5, 5, 5), observedGeneration: 3 }), true);
  });
});

describe('deploymentProgressing', () => {
  const cases: [
    name: string,
    previous: DeploymentStatusCounts,
    next: DeploymentStatusCounts,
    expected: boolean,
  ][] = [
    ['progressing: updated pods', counts(10, 4, 4, 4), counts(10, 6, 4, 4), true],
    ['not progressing', counts(10, 4, 4, 4), counts(10, 4, 4, 4), false],
    ['progressing: old pods removed', counts(10, 4, 6, 6), counts(8, 4, 6, 6), true],
    ['not progressing: less new pods', counts(10, 7, 3, 3), counts(10, 6, 3, 3), false],
    ['progressing: less overall but more new pods', counts(10, 4, 7, 7), counts(8, 8, 5, 5), true],
    ['progressing: more ready pods', counts(10, 10, 9, 8), counts(10, 10, 10, 8), true],
    ['progressing: more available pods', counts(10, 10, 10, 9), counts(10, 10, 10, 10), true],
  ];
  for (const [name, previous, next, expected] of cases) {
    it(name, () => assert.equal(deploymentProgressing(previous, next), expected));
  }
});

describe('deploymentTimedOut', () => {
  const at = (minute: number, second: number) => Date.UTC(2016, 0, 1, 0, minute, second);
  const cases: [
    name: string,
    deadline: number | undefined,
    reason: string | undefined,
    from: number,
    now: number,
    expected: boolean,
  ][] = [
    ['no progressDeadlineSeconds specified', undefined, 'ReplicaSetUpdated', at(1, 9), at(1, 20), false],
    ['no Progressing condition', 10, undefined, at(1, 9), at(1, 20), false],
    ['progressDeadlineSeconds 10, last progress 11s ago', 10, 'ReplicaSetUpdated', at(1, 9), at(1, 20), true],
    [
      'progressDeadlineSeconds 10, last progress 9s ago',
      10,
      'ReplicaSetUpdated',
      at(1, 11),
      at(1, 20),
      false,
    ],
    ['exactly at the deadline is not past it', 10, 'ReplicaSetUpdated', at(1, 10), at(1, 20), false],
    ['previous rollout finished', 10, ProgressReason.NewReplicaSetAvailable, at(1, 0), at(9, 0), false],
    ['already timed out', 10, ProgressReason.ProgressDeadlineExceeded, at(1, 19), at(1, 20), true],
    ['MaxInt32 means no deadline', 2147483647, 'ReplicaSetUpdated', 0, at(59, 0), false],
  ];
  for (const [name, deadline, reason, from, now, expected] of cases) {
    it(name, () => {
      assert.equal(
        deploymentTimedOut(
          { progressDeadlineSeconds: deadline, progressingReason: reason, lastProgressTime: from },
          now,
        ),
        expected,
      );
    });
  }
  it('accepts Date and RFC 3339 timestamps', () => {
    const input = { progressDeadlineSeconds: 10, progressingReason: 'ReplicaSetUpdated' };
    assert.equal(deploymentTimedOut({ ...input, lastProgressTime: new Date(at(1, 9)) }, at(1, 20)), true);
    assert.equal(deploymentTimedOut({ ...input, lastProgressTime: '2016-01-01T00:01:09Z' }, at(1, 20)), true);
  });
});

describe('progressDeadlineRequeue', () => {
  const base = {
    progressDeadlineSeconds: 600,
    progressingReason: 'ReplicaSetUpdated',
    lastProgressTime: 0,
    paused: false,
    complete: false,
  };
  const none = { kind: 'none' };
  it('requeues one second after the deadline', () => {
    assert.deepEqual(progressDeadlineRequeue(base, 3 * 60_000), { kind: 'after', ms: 7 * 60_000 + 1000 });
    for (const reason of ['NewReplicaSetCreated', 'FoundNewReplicaSet', 'DeploymentResumed']) {
      assert.deepEqual(progressDeadlineRequeue({ ...base, progressingReason: reason }, 0), {
        kind: 'after',
        ms: 601_000,
      });
    }
  });
  it('requeues rate-limited (backing off), never at once, when less than a second is left', () => {
    assert.deepEqual(progressDeadlineRequeue(base, 600_000 - 500), { kind: 'rate-limited' });
    assert.deepEqual(progressDeadlineRequeue(base, 700_000), { kind: 'rate-limited' });
  });
  it('does not requeue without a deadline, a condition or a progress time, or when complete', () => {
    assert.deepEqual(progressDeadlineRequeue({ ...base, progressDeadlineSeconds: undefined }, 0), none);
    assert.deepEqual(progressDeadlineRequeue({ ...base, progressDeadlineSeconds: 2147483647 }, 0), none);
    assert.deepEqual(progressDeadlineRequeue({ ...base, progressingReason: undefined }, 0), none);
    assert.deepEqual(progressDeadlineRequeue({ ...base, lastProgressTime: undefined }, 0), none);
    assert.deepEqual(progressDeadlineRequeue({ ...base, complete: true }, 700_000), none);
  });
  it('a paused deployment never requeues for its deadline, even long after it passed', () => {
    assert.deepEqual(progressDeadlineRequeue({ ...base, paused: true }, 0), none);
    assert.deepEqual(
      progressDeadlineRequeue({ ...base, paused: true, progressingReason: 'DeploymentPaused' }, 10_000_000),
      none,
    );
    // A stale paused condition on a resumed deployment (the status lags the spec) neither.
    assert.deepEqual(
      progressDeadlineRequeue({ ...base, progressingReason: 'DeploymentPaused' }, 10_000_000),
      none,
    );
  });
  it('does not requeue for reasons the deadline never changes', () => {
    for (const reason of [
      ProgressReason.ProgressDeadlineExceeded,
      ProgressReason.NewReplicaSetAvailable, // e.g. a complete deployment that lost a pod later
      'InvalidSpec',
    ]) {
      assert.deepEqual(
        progressDeadlineRequeue({ ...base, progressingReason: reason }, 10_000_000),
        none,
        reason,
      );
    }
  });
});

describe('requeueFor', () => {
  it('never asks for an immediate requeue', () => {
    assert.deepEqual(requeueFor({ kind: 'rate-limited' }), { requeue: true });
    assert.deepEqual(requeueFor({ kind: 'after', ms: 0 }), { requeueAfterMs: 1 });
    assert.deepEqual(requeueFor({ kind: 'after', ms: 300 }), { requeueAfterMs: 300 });
    assert.equal(requeueFor({ kind: 'none' }), undefined);
  });
});
