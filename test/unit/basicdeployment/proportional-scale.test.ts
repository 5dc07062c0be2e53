import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { maxSurge } from '../../../src/controllers/basicdeployment/logic/fenceposts.ts';
import {
  findActiveOrLatest,
  getProportion,
  getReplicaSetFraction,
  isSaturated,
  isScalingEvent,
  planProportionalScale,
} from '../../../src/controllers/basicdeployment/logic/proportional-scale.ts';
import type { DeploymentView, ReplicaSetView } from '../../../src/controllers/basicdeployment/logic/types.ts';
import {
  newTime,
  olderTime,
  oldTime,
  recreateDeployment,
  replicaSet,
  rollingDeployment,
} from './fixtures.ts';

/** Upstream TestScale: sets carry the desired/max values recorded by the previous deployment size. */
function recordedBy(previous: DeploymentView, set: ReplicaSetView): ReplicaSetView {
  return { ...set, desiredReplicas: previous.replicas, maxReplicas: previous.replicas + maxSurge(previous) };
}

interface ScaleCase {
  name: string;
  deployment: DeploymentView;
  previous: DeploymentView;
  newSet?: [name: string, replicas: number, time: string];
  oldSets: [name: string, replicas: number, time: string][];
  expected: Record<string, number>;
}

const d = (replicas: number, surge = 0) => rollingDeployment(replicas, surge, 0);

const cases: ScaleCase[] = [
  {
    name: 'normal scaling event: 10 -> 12',
    deployment: d(12),
    previous: d(10),
    newSet: ['v1', 10, newTime],
    oldSets: [],
    expected: { v1: 12 },
  },
  {
    name: 'normal scaling event: 10 -> 5',
    deployment: d(5),
    previous: d(10),
    newSet: ['v1', 10, newTime],
    oldSets: [],
    expected: { v1: 5 },
  },
  {
    name: 'proportional scaling: 5 -> 10',
    deployment: d(10),
    previous: d(5),
    newSet: ['v2', 2, newTime],
    oldSets: [['v1', 3, oldTime]],
    expected: { v2: 4, v1: 6 },
  },
  {
    name: 'proportional scaling: 5 -> 3',
    deployment: d(3),
    previous: d(5),
    newSet: ['v2', 2, newTime],
    oldSets: [['v1', 3, oldTime]],
    expected: { v2: 1, v1: 2 },
  },
  {
    name: 'proportional scaling: 9 -> 4',
    deployment: d(4),
    previous: d(9),
    newSet: ['v2', 8, newTime],
    oldSets: [['v1', 1, oldTime]],
    expected: { v2: 4, v1: 0 },
  },
  {
    name: 'proportional scaling: 7 -> 10',
    deployment: d(10),
    previous: d(7),
    newSet: ['v3', 2, newTime],
    oldSets: [
      ['v2', 3, oldTime],
      ['v1', 2, olderTime],
    ],
    expected: { v3: 3, v2: 4, v1: 3 },
  },
  {
    name: 'proportional scaling: 13 -> 8',
    deployment: d(8),
    previous: d(13),
    newSet: ['v3', 2, newTime],
    oldSets: [
      ['v2', 8, oldTime],
      ['v1', 3, olderTime],
    ],
    expected: { v3: 1, v2: 5, v1: 2 },
  },
  {
    name: 'leftover distribution 3 -> 4: scales up the newest of equal sets',
    deployment: d(4),
    previous: d(3),
    newSet: ['v3', 1, newTime],
    oldSets: [
      ['v2', 1, oldTime],
      ['v1', 1, olderTime],
    ],
    expected: { v3: 2, v2: 1, v1: 1 },
  },
  {
    name: 'leftover distribution 3 -> 2: scales down the oldest of equal sets',
    deployment: d(2),
    previous: d(3),
    newSet: ['v3', 1, newTime],
    oldSets: [
      ['v2', 1, oldTime],
      ['v1', 1, olderTime],
    ],
    expected: { v3: 1, v2: 1, v1: 0 },
  },
  {
    name: 'no new set 4 -> 5: scales up the latest set first',
    deployment: d(5),
    previous: d(4),
    oldSets: [
      ['v2', 2, oldTime],
      ['v1', 2, olderTime],
    ],
    expected: { v2: 3, v1: 2 },
  },
  {
    name: 'scales down to zero: 6 -> 0',
    deployment: d(0),
    previous: d(6),
    newSet: ['v3', 3, newTime],
    oldSets: [
      ['v2', 2, oldTime],
      ['v1', 1, olderTime],
    ],
    expected: { v3: 0, v2: 0, v1: 0 },
  },
  {
    name: 'scales up from zero: only the new set grows',
    deployment: d(6),
    previous: d(6),
    newSet: ['v3', 0, newTime],
    oldSets: [
      ['v2', 0, oldTime],
      ['v1', 0, olderTime],
    ],
    expected: { v3: 6, v2: 0, v1: 0 },
  },
  {
    name: 'deployment with surge pods',
    deployment: d(20, 2),
    previous: d(10, 2),
    newSet: ['v2', 6, newTime],
    oldSets: [['v1', 6, oldTime]],
    expected: { v2: 11, v1: 11 },
  },
  {
    name: 'change both surge and size',
    deployment: d(50, 6),
    previous: d(10, 3),
    newSet: ['v2', 5, newTime],
    oldSets: [['v1', 8, oldTime]],
    expected: { v2: 22, v1: 34 },
  },
  {
    name: 'change both size and template (no new set yet)',
    deployment: d(14),
    previous: d(10),
    oldSets: [
      ['v2', 7, newTime],
      ['v1', 3, oldTime],
    ],
    expected: { v2: 10, v1: 4 },
  },
];

describe('planProportionalScale (upstream TestScale cases)', () => {
  for (const c of cases) {
    it(c.name, () => {
      const newSet =
        c.newSet &&
        recordedBy(c.previous, replicaSet(c.newSet[0], c.newSet[1], { creationTimestamp: c.newSet[2] }));
      const oldSets = c.oldSets.map(([name, replicas, time]) =>
        recordedBy(c.previous, replicaSet(name, replicas, { creationTimestamp: time })),
      );
      const sizes: Record<string, number> = {};
      for (const set of [...(newSet ? [newSet] : []), ...oldSets]) sizes[set.name] = set.specReplicas;
      for (const action of planProportionalScale(c.deployment, newSet, oldSets)) {
        assert.equal(action.from, sizes[action.name]);
        assert.equal(action.desiredReplicas, c.deployment.replicas);
        assert.equal(action.maxReplicas, c.deployment.replicas + maxSurge(c.deployment));
        sizes[action.name] = action.to;
      }
      assert.deepEqual(sizes, c.expected);
    });
  }

  it('leaves a saturated but broken new set and its old pods alone', () => {
    const deployment = rollingDeployment(2, 1, 1);
    const newSet = recordedBy(
      deployment,
      replicaSet('v2', 2, { creationTimestamp: newTime, availableReplicas: 0 }),
    );
    const oldSets = [recordedBy(deployment, replicaSet('v1', 1, { creationTimestamp: oldTime }))];
    assert.deepEqual(planProportionalScale(deployment, newSet, oldSets), []);
  });

  it('scales old sets to 0 when the new set is saturated', () => {
    const deployment = rollingDeployment(3, 1, 1);
    const newSet = recordedBy(deployment, replicaSet('v2', 3, { creationTimestamp: newTime }));
    const oldSets = [recordedBy(deployment, replicaSet('v1', 1, { creationTimestamp: oldTime }))];
    assert.deepEqual(
      planProportionalScale(deployment, newSet, oldSets).map((a) => [a.name, a.to]),
      [['v1', 0]],
    );
  });

  it('only refreshes recorded values when the total already fits', () => {
    const deployment = rollingDeployment(4, 0, 1);
    const newSet = replicaSet('v2', 2, { creationTimestamp: newTime, desiredReplicas: 5, maxReplicas: 5 });
    const oldSets = [replicaSet('v1', 2, { creationTimestamp: oldTime, desiredReplicas: 4, maxReplicas: 4 })];
    assert.deepEqual(
      planProportionalScale(deployment, newSet, oldSets).map((a) => [
        a.name,
        a.from,
        a.to,
        a.desiredReplicas,
        a.maxReplicas,
      ]),
      [['v2', 2, 2, 4, 4]],
    );
  });

  it('does not scale Recreate deployments proportionally', () => {
    const deployment = recreateDeployment(10);
    const sets = [
      replicaSet('v2', 2, { creationTimestamp: newTime }),
      replicaSet('v1', 3, { creationTimestamp: oldTime }),
    ];
    assert.deepEqual(planProportionalScale(deployment, sets[0], [sets[1]!]), []);
  });
});

describe('getReplicaSetFraction and getProportion', () => {
  it('a deployment scaled to 0 takes everything away', () => {
    assert.equal(getReplicaSetFraction(replicaSet('a', 4, { maxReplicas: 10 }), d(0)), -4);
  });
  it('rounds halves away from zero like Go', () => {
    // 1 * 5 / 2 = 2.5 -> 3
    assert.equal(getReplicaSetFraction(replicaSet('a', 1, { maxReplicas: 2 }), d(5)), 2);
    // 3 * 1 / 2 = 1.5 -> 2
    assert.equal(getReplicaSetFraction(replicaSet('a', 3, { maxReplicas: 2 }), d(1)), -1);
  });
  it('falls back to status.replicas without a recorded max, and to 0 without either', () => {
    assert.equal(getReplicaSetFraction(replicaSet('a', 2), { ...d(10), statusReplicas: 5 }), 2);
    assert.equal(
      getReplicaSetFraction(replicaSet('a', 2, { maxReplicas: 0 }), { ...d(10), statusReplicas: 5 }),
      2,
    );
    assert.equal(getReplicaSetFraction(replicaSet('a', 2), d(10)), 0);
  });
  it('never hands out more than is left to add or remove', () => {
    const set = replicaSet('a', 3, { maxReplicas: 5 });
    assert.equal(getProportion(set, d(10), 5, 0), 3);
    assert.equal(getProportion(set, d(10), 5, 4), 1);
    assert.equal(getProportion(set, d(1), -4, -3), -1);
  });
  it('is 0 for empty sets, nothing to add, or nothing left', () => {
    assert.equal(getProportion(undefined, d(10), 5, 0), 0);
    assert.equal(getProportion(replicaSet('a', 0, { maxReplicas: 5 }), d(10), 5, 0), 0);
    assert.equal(getProportion(replicaSet('a', 3, { maxReplicas: 5 }), d(10), 0, 0), 0);
    assert.equal(getProportion(replicaSet('a', 3, { maxReplicas: 5 }), d(10), 5, 5), 0);
  });
});

describe('findActiveOrLatest', () => {
  it('returns the only active set', () => {
    const only = replicaSet('b', 2, { creationTimestamp: olderTime });
    assert.equal(
      findActiveOrLatest(replicaSet('new', 0, { creationTimestamp: newTime }), [only, replicaSet('a', 0)]),
      only,
    );
  });
  it('returns the new set, else the newest old set, when none is active', () => {
    const newSet = replicaSet('new', 0, { creationTimestamp: newTime });
    const older = replicaSet('older', 0, { creationTimestamp: olderTime });
    const old = replicaSet('old', 0, { creationTimestamp: oldTime });
    assert.equal(findActiveOrLatest(newSet, [older, old]), newSet);
    assert.equal(findActiveOrLatest(undefined, [older, old]), old);
    assert.equal(findActiveOrLatest(undefined, []), undefined);
  });
  it('returns nothing when several sets are active', () => {
    assert.equal(findActiveOrLatest(replicaSet('new', 1), [replicaSet('old', 1)]), undefined);
  });
});

describe('isSaturated', () => {
  const deployment = d(3);
  it('needs spec, recorded desired value and available replicas all equal to spec.replicas', () => {
    assert.equal(isSaturated(deployment, replicaSet('n', 3, { desiredReplicas: 3 })), true);
    assert.equal(isSaturated(deployment, replicaSet('n', 3)), false);
    assert.equal(isSaturated(deployment, replicaSet('n', 3, { desiredReplicas: 2 })), false);
    assert.equal(
      isSaturated(deployment, replicaSet('n', 3, { desiredReplicas: 3, availableReplicas: 2 })),
      false,
    );
    assert.equal(isSaturated(deployment, replicaSet('n', 2, { desiredReplicas: 3 })), false);
    assert.equal(isSaturated(deployment, undefined), false);
  });
});

describe('isScalingEvent', () => {
  it('is true when an active set recorded another spec.replicas', () => {
    const deployment = d(5);
    assert.equal(
      isScalingEvent(deployment, replicaSet('n', 2, { desiredReplicas: 4 }), [
        replicaSet('o', 2, { desiredReplicas: 4 }),
      ]),
      true,
    );
    assert.equal(
      isScalingEvent(deployment, replicaSet('n', 2, { desiredReplicas: 5 }), [
        replicaSet('o', 2, { desiredReplicas: 5 }),
      ]),
      false,
    );
  });
  it('ignores inactive sets and sets without a record', () => {
    const deployment = d(5);
    assert.equal(
      isScalingEvent(deployment, replicaSet('n', 5), [replicaSet('o', 0, { desiredReplicas: 3 })]),
      false,
    );
  });
  it('is false when a rollout is about to start, unless paused', () => {
    const old = [replicaSet('o', 2, { desiredReplicas: 4 })];
    assert.equal(isScalingEvent(d(5), undefined, old), false);
    assert.equal(isScalingEvent({ ...d(5), paused: true }, undefined, old), true);
  });
});
