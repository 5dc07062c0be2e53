import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BASIC_DEPLOYMENT,
  BASIC_REPLICA_SET,
  type BasicDeployment,
  type BasicReplicaSet,
  type Condition,
} from '../../../src/apis/index.ts';
import { computeStatus } from '../../../src/controllers/basicdeployment/status.ts';

const NOW = Date.parse('2026-01-01T00:10:00Z');

function deployment(spec: Partial<BasicDeployment['spec']> = {}, status?: BasicDeployment['status']) {
  const d: BasicDeployment = {
    apiVersion: BASIC_DEPLOYMENT.apiVersion,
    kind: BASIC_DEPLOYMENT.kind,
    metadata: { name: 'web', namespace: 'ns', uid: 'd-uid', generation: 2 },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'app', image: 'pause' }] },
      },
      progressDeadlineSeconds: 600,
      ...spec,
    },
  };
  if (status) d.status = status;
  return d;
}

function set(
  name: string,
  specReplicas: number,
  status: Partial<NonNullable<BasicReplicaSet['status']>> = {},
): BasicReplicaSet {
  return {
    apiVersion: BASIC_REPLICA_SET.apiVersion,
    kind: BASIC_REPLICA_SET.kind,
    metadata: { name, namespace: 'ns', uid: `${name}-uid`, generation: 1 },
    spec: {
      replicas: specReplicas,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'app', image: 'pause' }] },
      },
    },
    status: {
      replicas: specReplicas,
      readyReplicas: specReplicas,
      availableReplicas: specReplicas,
      observedGeneration: 1,
      ...status,
    },
  };
}

const condition = (conditions: Condition[] | undefined, type: string) =>
  conditions?.find((c) => c.type === type);

describe('computeStatus', () => {
  describe('Available', () => {
    it('under Recreate needs every replica available (upstream MaxUnavailable is 0 for Recreate)', () => {
      const d = deployment({ strategy: { type: 'Recreate' } });
      const partly = computeStatus(
        d,
        { newSet: undefined, allSets: [set('old', 3, { availableReplicas: 1 })], createdNewSet: false },
        NOW,
      );
      assert.equal(condition(partly.conditions, 'Available')?.status, 'False');
      const none = computeStatus(d, { newSet: undefined, allSets: [], createdNewSet: false }, NOW);
      assert.equal(condition(none.conditions, 'Available')?.status, 'False');
      const all = computeStatus(
        d,
        { newSet: set('new', 3), allSets: [set('new', 3)], createdNewSet: false },
        NOW,
      );
      assert.equal(condition(all.conditions, 'Available')?.status, 'True');
    });
    it('under RollingUpdate needs replicas - maxUnavailable', () => {
      const d = deployment({ replicas: 4 }); // 25% of 4: 1 may be unavailable
      const facts = (available: number) => {
        const s = set('new', 4, { availableReplicas: available });
        return { newSet: s, allSets: [s], createdNewSet: false };
      };
      assert.equal(condition(computeStatus(d, facts(3), NOW).conditions, 'Available')?.status, 'True');
      assert.equal(condition(computeStatus(d, facts(2), NOW).conditions, 'Available')?.status, 'False');
    });
  });

  it("unavailableReplicas is the sets' spec.replicas minus available ones, never negative (upstream calculateStatus)", () => {
    const d = deployment({ replicas: 3 });
    // Mid-rollout with a surge: 2 + 2 wanted, 3 available.
    const newSet = set('new', 2, { replicas: 2, availableReplicas: 1 });
    const old = set('old', 2, { replicas: 2, availableReplicas: 2 });
    const status = computeStatus(d, { newSet, allSets: [newSet, old], createdNewSet: false }, NOW);
    assert.equal(status.unavailableReplicas, 1);
    // Scaling down: more available than wanted.
    const shrinking = set('new', 1, { replicas: 3, availableReplicas: 3 });
    const down = computeStatus(
      deployment({ replicas: 1 }),
      { newSet: shrinking, allSets: [shrinking], createdNewSet: false },
      NOW,
    );
    assert.equal(down.unavailableReplicas, 0);
  });

  describe('ReplicaFailure', () => {
    const failure = (message: string): Condition => ({
      type: 'ReplicaFailure',
      status: 'True',
      reason: 'FailedCreate',
      message,
      lastTransitionTime: '2026-01-01T00:05:00Z',
      observedGeneration: 1,
    });
    it("is copied from the new set's ReplicaFailure condition, preferring it over old sets'", () => {
      const newSet = set('new', 3, { availableReplicas: 0, conditions: [failure('quota exceeded (new)')] });
      const old = set('old', 1, { conditions: [failure('quota exceeded (old)')] });
      const status = computeStatus(
        deployment(),
        { newSet, allSets: [newSet, old], createdNewSet: false },
        NOW,
      );
      const c = condition(status.conditions, 'ReplicaFailure');
      assert.equal(c?.status, 'True');
      assert.equal(c?.reason, 'FailedCreate');
      assert.equal(c?.message, 'quota exceeded (new)');
    });
    it("falls back to an old set's failure", () => {
      const newSet = set('new', 3);
      const old = set('old', 1, { conditions: [failure('admission webhook denied')] });
      const status = computeStatus(
        deployment(),
        { newSet, allSets: [newSet, old], createdNewSet: false },
        NOW,
      );
      assert.equal(condition(status.conditions, 'ReplicaFailure')?.message, 'admission webhook denied');
    });
    it('is removed once no set reports one', () => {
      const d = deployment({}, { conditions: [failure('quota exceeded')] });
      const newSet = set('new', 3);
      const status = computeStatus(d, { newSet, allSets: [newSet], createdNewSet: false }, NOW);
      assert.equal(condition(status.conditions, 'ReplicaFailure'), undefined);
    });
  });

  describe('pausing', () => {
    const timedOut: Condition = {
      type: 'Progressing',
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: 'BasicReplicaSet "web-1" has timed out progressing.',
      lastTransitionTime: '2026-01-01T00:01:00Z',
      observedGeneration: 1,
    };
    const stuck = () => {
      const newSet = set('new', 3, { availableReplicas: 0, readyReplicas: 0 });
      return { newSet, allSets: [newSet], createdNewSet: false };
    };
    it('keeps ProgressDeadlineExceeded (upstream checkPausedConditions)', () => {
      const d = deployment(
        { paused: true },
        { conditions: [timedOut], lastProgressTime: '2026-01-01T00:00:00Z' },
      );
      const status = computeStatus(d, stuck(), NOW);
      assert.equal(condition(status.conditions, 'Progressing')?.reason, 'ProgressDeadlineExceeded');
      assert.equal(condition(status.conditions, 'Progressing')?.status, 'False');
    });
    it('otherwise sets Progressing Unknown/DeploymentPaused', () => {
      const progressing: Condition = { ...timedOut, status: 'True', reason: 'ReplicaSetUpdated' };
      const d = deployment(
        { paused: true },
        { conditions: [progressing], lastProgressTime: '2026-01-01T00:09:00Z' },
      );
      const status = computeStatus(d, stuck(), NOW);
      assert.equal(condition(status.conditions, 'Progressing')?.reason, 'DeploymentPaused');
      assert.equal(condition(status.conditions, 'Progressing')?.status, 'Unknown');
    });
  });

  it('reports the collisionCount it is given, not the (possibly stale) cached one', () => {
    const d = deployment({}, { collisionCount: 0 });
    const newSet = set('new', 3);
    const status = computeStatus(
      d,
      { newSet, allSets: [newSet], createdNewSet: false, collisionCount: 1 },
      NOW,
    );
    assert.equal(status.collisionCount, 1);
  });

  describe('terminating pods', () => {
    it('are summed into terminatingReplicas, as apps/v1 reports them', () => {
      const newSet = set('new', 3, { terminatingReplicas: 1 });
      const old = set('old', 0, {
        replicas: 0,
        readyReplicas: 0,
        availableReplicas: 0,
        terminatingReplicas: 2,
      });
      const status = computeStatus(
        deployment(),
        { newSet, allSets: [newSet, old], createdNewSet: false },
        NOW,
      );
      assert.equal(status.terminatingReplicas, 3);
      assert.equal(status.replicas, 3);
    });

    it('of an older template keep ready false: no pod of an older template is left only once they are gone', () => {
      const newSet = set('new', 3);
      const old = set('old', 0, {
        replicas: 0,
        readyReplicas: 0,
        availableReplicas: 0,
        terminatingReplicas: 1,
      });
      const during = computeStatus(
        deployment(),
        { newSet, allSets: [newSet, old], createdNewSet: false },
        NOW,
      );
      assert.equal(during.ready, false);
      assert.equal(condition(during.conditions, 'Ready')?.status, 'False');
      const gone = set('old', 0, {
        replicas: 0,
        readyReplicas: 0,
        availableReplicas: 0,
        terminatingReplicas: 0,
      });
      const after = computeStatus(
        deployment(),
        { newSet, allSets: [newSet, gone], createdNewSet: false },
        NOW,
      );
      assert.equal(after.ready, true);
    });
  });

  it('a finished rollout that scales up or loses a pod keeps Progressing NewReplicaSetAvailable', () => {
    const done: Condition = {
      type: 'Progressing',
      status: 'True',
      reason: 'NewReplicaSetAvailable',
      message: 'BasicReplicaSet "new" has successfully progressed.',
      lastTransitionTime: '2026-01-01T00:00:00Z',
      observedGeneration: 2,
    };
    const previous = {
      conditions: [done],
      lastProgressTime: '2026-01-01T00:00:00Z',
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
    };
    const scaled = set('new', 5, { replicas: 5, readyReplicas: 4, availableReplicas: 4 });
    const status = computeStatus(
      deployment({ replicas: 5 }, previous),
      { newSet: scaled, allSets: [scaled], createdNewSet: false },
      NOW,
    );
    assert.equal(condition(status.conditions, 'Progressing')?.reason, 'NewReplicaSetAvailable');
    assert.equal(status.lastProgressTime, '2026-01-01T00:00:00Z');
    assert.equal(status.ready, false);
  });

  it('resuming without progress sets Progressing Unknown/DeploymentResumed and restarts the deadline', () => {
    const paused: Condition = {
      type: 'Progressing',
      status: 'Unknown',
      reason: 'DeploymentPaused',
      message: 'Deployment is paused',
      lastTransitionTime: '2026-01-01T00:00:00Z',
      observedGeneration: 1,
    };
    const counts = { replicas: 3, updatedReplicas: 1, readyReplicas: 3, availableReplicas: 3 };
    const d = deployment({}, { conditions: [paused], lastProgressTime: '2026-01-01T00:00:00Z', ...counts });
    const newSet = set('new', 1, { replicas: 1, readyReplicas: 1, availableReplicas: 1 });
    const old = set('old', 2);
    const status = computeStatus(d, { newSet, allSets: [newSet, old], createdNewSet: false }, NOW);
    assert.equal(condition(status.conditions, 'Progressing')?.reason, 'DeploymentResumed');
    assert.equal(condition(status.conditions, 'Progressing')?.status, 'Unknown');
    assert.equal(status.lastProgressTime, new Date(NOW).toISOString());
  });
  it('has no Progressing condition without a progress deadline (upstream HasProgressDeadline)', () => {
    const newSet = set('new', 3, { availableReplicas: 1 });
    const status = computeStatus(
      deployment({ progressDeadlineSeconds: 2147483647 }),
      { newSet, allSets: [newSet], createdNewSet: true },
      NOW,
    );
    assert.equal(condition(status.conditions, 'Progressing'), undefined);
  });
});

describe('kstatus Stalled', () => {
  const stuck = () => {
    const newSet = set('new', 3, { availableReplicas: 0, readyReplicas: 0 });
    return { newSet, allSets: [newSet], createdNewSet: false };
  };
  const progressing: Condition = {
    type: 'Progressing',
    status: 'True',
    reason: 'ReplicaSetUpdated',
    message: 'BasicReplicaSet "new" is progressing.',
    lastTransitionTime: '2026-01-01T00:00:00Z',
    observedGeneration: 2,
  };
  const stuckStatus = (conditions: Condition[]): BasicDeployment['status'] => ({
    replicas: 3,
    updatedReplicas: 3,
    readyReplicas: 0,
    availableReplicas: 0,
    lastProgressTime: '2026-01-01T00:00:00Z',
    conditions,
  });

  it('is set with ProgressDeadlineExceeded once the rollout is past its deadline', () => {
    const d = deployment({ progressDeadlineSeconds: 300 }, stuckStatus([progressing]));
    const status = computeStatus(d, stuck(), NOW);
    assert.deepEqual(condition(status.conditions, 'Stalled'), {
      type: 'Stalled',
      status: 'True',
      reason: 'ProgressDeadlineExceeded',
      message: 'BasicReplicaSet "new" has timed out progressing.',
      observedGeneration: 2,
      lastTransitionTime: '2026-01-01T00:10:00Z',
    });
    assert.equal(condition(status.conditions, 'Ready')?.status, 'False');
  });

  it('is absent while the rollout is within its deadline, and when it completes', () => {
    const d = deployment({ progressDeadlineSeconds: 3600 }, stuckStatus([progressing]));
    assert.equal(condition(computeStatus(d, stuck(), NOW).conditions, 'Stalled'), undefined);
    const newSet = set('new', 3);
    const done = computeStatus(d, { newSet, allSets: [newSet], createdNewSet: false }, NOW);
    assert.equal(condition(done.conditions, 'Stalled'), undefined);
  });

  it('is removed when a new template starts a new rollout', () => {
    const stalled = computeStatus(
      deployment({ progressDeadlineSeconds: 300 }, stuckStatus([progressing])),
      stuck(),
      NOW,
    );
    const newSet = set('newer', 3, { replicas: 0, availableReplicas: 0, readyReplicas: 0 });
    const next = computeStatus(
      deployment({ progressDeadlineSeconds: 300 }, stalled),
      { newSet, allSets: [newSet, ...stuck().allSets], createdNewSet: true },
      NOW,
    );
    assert.equal(condition(next.conditions, 'Progressing')?.reason, 'NewReplicaSetCreated');
    assert.equal(condition(next.conditions, 'Stalled'), undefined);
  });

  it('is set with InvalidSpec for a spec the controller cannot roll out', () => {
    const status = computeStatus(
      deployment(),
      { ...stuck(), invalid: 'selector does not match template labels' },
      NOW,
    );
    assert.equal(condition(status.conditions, 'Stalled')?.reason, 'InvalidSpec');
    assert.equal(condition(status.conditions, 'Stalled')?.message, 'selector does not match template labels');
  });
});
