import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveFenceposts } from '../../../src/controllers/basicdeployment/logic/fenceposts.ts';
import {
  newReplicaSetReplicas,
  planNewReplicaSetScale,
  planOldReplicaSetsScaleDown,
  planRollingUpdate,
} from '../../../src/controllers/basicdeployment/logic/rolling-update.ts';
import type { DeploymentView, ReplicaSetView } from '../../../src/controllers/basicdeployment/logic/types.ts';
import {
  newTime,
  olderTime,
  oldTime,
  recreateDeployment,
  replicaSet,
  rollingDeployment,
} from './fixtures.ts';

describe('newReplicaSetReplicas', () => {
  it('cannot scale up past spec.replicas + maxSurge: keeps the current size', () => {
    const d = rollingDeployment(1, 1, 1);
    assert.equal(newReplicaSetReplicas(d, replicaSet('new', 5), [replicaSet('old', 5)]), 5);
  });
  it('scales up to spec.replicas at most', () => {
    const d = rollingDeployment(6, 10, 1);
    assert.equal(newReplicaSetReplicas(d, replicaSet('new', 2), [replicaSet('old', 5)]), 6);
  });
  it('uses spec.replicas straight away for Recreate', () => {
    assert.equal(
      newReplicaSetReplicas(recreateDeployment(3), replicaSet('new', 1), [replicaSet('old', 5)]),
      3,
    );
  });
  it('sizes a set about to be created', () => {
    assert.equal(newReplicaSetReplicas(rollingDeployment(10, 2, 1), undefined, [replicaSet('old', 10)]), 2);
    assert.equal(
      newReplicaSetReplicas(rollingDeployment(10, '25%', '25%'), undefined, [replicaSet('old', 10)]),
      3,
    );
    assert.equal(newReplicaSetReplicas(rollingDeployment(10, 0, 1), undefined, [replicaSet('old', 10)]), 0);
    assert.equal(newReplicaSetReplicas(rollingDeployment(4, 1, 1), undefined, []), 4);
  });
});

describe('planNewReplicaSetScale (upstream reconcileNewReplicaSet cases)', () => {
  const cases: { surge: number; old: number; current: number; expected: number | undefined }[] = [
    { surge: 0, old: 10, current: 0, expected: undefined },
    { surge: 2, old: 10, current: 0, expected: 2 },
    { surge: 2, old: 5, current: 0, expected: 7 },
    { surge: 2, old: 10, current: 2, expected: undefined },
    { surge: 2, old: 2, current: 11, expected: 10 },
    { surge: 2, old: 0, current: 10, expected: undefined },
  ];
  for (const { surge, old, current, expected } of cases) {
    it(`10 replicas, maxSurge ${surge}, old ${old}, new ${current} -> ${expected ?? 'no change'}`, () => {
      const d = rollingDeployment(10, surge, 0);
      const action = planNewReplicaSetScale(d, replicaSet('new', current), [replicaSet('old', old)]);
      assert.equal(action?.to, expected);
      if (action !== undefined) {
        assert.equal(action.from, current);
        assert.deepEqual(
          { desired: action.desiredReplicas, max: action.maxReplicas },
          { desired: 10, max: 10 + surge },
        );
      }
    });
  }
});

describe('planOldReplicaSetsScaleDown (upstream reconcileOldReplicaSets cases)', () => {
  const cases: {
    name: string;
    maxUnavailable: number;
    old: number;
    oldAvailable: number;
    newReplicas: number;
    newAvailable: number;
    expected: number | undefined;
    cleanedUp: number;
    scaledDown: number;
  }[] = [
    {
      name: 'both fenceposts 0 resolve to 1 unavailable',
      maxUnavailable: 0,
      old: 10,
      oldAvailable: 10,
      newReplicas: 0,
      newAvailable: 0,
      expected: 9,
      cleanedUp: 0,
      scaledDown: 1,
    },
    {
      name: 'scale down within maxUnavailable',
      maxUnavailable: 2,
      old: 10,
      oldAvailable: 10,
      newReplicas: 0,
      newAvailable: 0,
      expected: 8,
      cleanedUp: 0,
      scaledDown: 2,
    },
    {
      name: 'unhealthy old replicas are cleaned up',
      maxUnavailable: 2,
      old: 10,
      oldAvailable: 8,
      newReplicas: 0,
      newAvailable: 0,
      expected: 8,
      cleanedUp: 2,
      scaledDown: 0,
    },
    {
      name: 'one unhealthy cleaned up, one available scaled down',
      maxUnavailable: 2,
      old: 10,
      oldAvailable: 9,
      newReplicas: 0,
      newAvailable: 0,
      expected: 8,
      cleanedUp: 1,
      scaledDown: 1,
    },
    {
      name: 'unavailable new pods block further scale down',
      maxUnavailable: 2,
      old: 8,
      oldAvailable: 8,
      newReplicas: 2,
      newAvailable: 0,
      expected: undefined,
      cleanedUp: 0,
      scaledDown: 0,
    },
    {
      name: 'available new pods allow scale down',
      maxUnavailable: 2,
      old: 8,
      oldAvailable: 8,
      newReplicas: 2,
      newAvailable: 2,
      expected: 6,
      cleanedUp: 0,
      scaledDown: 2,
    },
    {
      name: 'unhealthy replicas go even when availability is already low',
      maxUnavailable: 2,
      old: 10,
      oldAvailable: 1,
      newReplicas: 0,
      newAvailable: 0,
      expected: 8,
      cleanedUp: 2,
      scaledDown: 0,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = rollingDeployment(10, 0, c.maxUnavailable);
      const newSet = replicaSet('new', c.newReplicas, { availableReplicas: c.newAvailable });
      const plan = planOldReplicaSetsScaleDown(d, newSet, [
        replicaSet('old', c.old, { availableReplicas: c.oldAvailable }),
      ]);
      assert.equal(plan.actions[0]?.to, c.expected);
      assert.equal(plan.actions.length, c.expected === undefined ? 0 : 1);
      assert.equal(plan.cleanedUp, c.cleanedUp);
      assert.equal(plan.scaledDown, c.scaledDown);
    });
  }

  it('caps clean-up at the scale-down budget', () => {
    const d = rollingDeployment(10, 0, 1);
    const plan = planOldReplicaSetsScaleDown(d, replicaSet('new', 0), [
      replicaSet('old', 10, { availableReplicas: 8 }),
    ]);
    assert.deepEqual(
      plan.actions.map((a) => [a.name, a.from, a.to]),
      [['old', 10, 9]],
    );
    assert.equal(plan.cleanedUp, 1);
  });

  it('scales down the oldest set first', () => {
    const d = rollingDeployment(10, 0, 2);
    const oldSets = [
      replicaSet('b', 4, { creationTimestamp: oldTime }),
      replicaSet('a', 3, { creationTimestamp: olderTime }),
    ];
    const plan = planOldReplicaSetsScaleDown(
      d,
      replicaSet('new', 3, { creationTimestamp: newTime }),
      oldSets,
    );
    assert.deepEqual(
      plan.actions.map((a) => [a.name, a.to]),
      [['a', 1]],
    );
  });

  it('spills over into the next oldest set', () => {
    const d = rollingDeployment(10, 0, 5);
    const oldSets = [
      replicaSet('b', 4, { creationTimestamp: oldTime }),
      replicaSet('a', 3, { creationTimestamp: olderTime }),
    ];
    const plan = planOldReplicaSetsScaleDown(
      d,
      replicaSet('new', 3, { creationTimestamp: newTime }),
      oldSets,
    );
    assert.deepEqual(
      plan.actions.map((a) => [a.name, a.from, a.to]),
      [
        ['a', 3, 0],
        ['b', 4, 2],
      ],
    );
  });

  it('cleans up unhealthy replicas of any old set before touching healthy ones', () => {
    const d = rollingDeployment(10, 0, 2);
    const oldSets = [
      replicaSet('a', 3, { creationTimestamp: olderTime }),
      replicaSet('b', 4, { creationTimestamp: oldTime, availableReplicas: 2 }),
    ];
    const plan = planOldReplicaSetsScaleDown(
      d,
      replicaSet('new', 3, { creationTimestamp: newTime }),
      oldSets,
    );
    assert.deepEqual(
      plan.actions.map((a) => [a.name, a.to]),
      [['b', 2]],
    );
    assert.deepEqual([plan.cleanedUp, plan.scaledDown], [2, 0]);
  });

  it('merges clean-up and scale-down of one set into one action', () => {
    const d = rollingDeployment(10, 0, 3);
    const plan = planOldReplicaSetsScaleDown(d, replicaSet('new', 0), [
      replicaSet('old', 10, { availableReplicas: 9 }),
    ]);
    assert.deepEqual(
      plan.actions.map((a) => [a.from, a.to]),
      [[10, 7]],
    );
  });

  it('ignores old sets already at 0 and does nothing without old pods', () => {
    const d = rollingDeployment(10, 0, 2);
    const plan = planOldReplicaSetsScaleDown(d, replicaSet('new', 10), [
      replicaSet('old', 0, { availableReplicas: 0 }),
    ]);
    assert.deepEqual(plan, { actions: [], cleanedUp: 0, scaledDown: 0 });
  });

  it('stops when a stale status reports more available than wanted, like upstream', () => {
    const d = rollingDeployment(10, 0, 2);
    const oldSets = [replicaSet('old', 5, { availableReplicas: 7 })];
    const plan = planOldReplicaSetsScaleDown(d, replicaSet('new', 5), oldSets);
    assert.deepEqual(plan, { actions: [], cleanedUp: 0, scaledDown: 0 });
  });
});

/** A toy cluster: old pods vanish as soon as their set shrinks; new pods become available one tick later. */
interface World {
  newSet: ReplicaSetView;
  oldSets: ReplicaSetView[];
}

function applyActions(world: World, actions: readonly { name: string; to: number }[]): void {
  for (const action of actions) {
    for (const set of [world.newSet, ...world.oldSets]) {
      if (set.name !== action.name) continue;
      set.specReplicas = action.to;
      set.statusReplicas = Math.min(set.statusReplicas, action.to);
      set.availableReplicas = Math.min(set.availableReplicas, action.to);
    }
  }
}

function tick(world: World, newPodsBecomeAvailable: boolean): void {
  world.newSet.statusReplicas = world.newSet.specReplicas;
  if (newPodsBecomeAvailable) world.newSet.availableReplicas = world.newSet.specReplicas;
}

const totalSpec = (w: World) => [w.newSet, ...w.oldSets].reduce((sum, s) => sum + s.specReplicas, 0);
const totalAvailable = (w: World) =>
  [w.newSet, ...w.oldSets].reduce((sum, s) => sum + s.availableReplicas, 0);

function simulate(d: DeploymentView, oldSets: ReplicaSetView[], newPodsBecomeAvailable: boolean) {
  const world: World = {
    oldSets,
    newSet: replicaSet('new', newReplicaSetReplicas(d, undefined, oldSets), {
      statusReplicas: 0,
      availableReplicas: 0,
      creationTimestamp: newTime,
    }),
  };
  const history = [
    {
      step: 'create',
      newSpec: world.newSet.specReplicas,
      oldSpec: totalSpec(world) - world.newSet.specReplicas,
    },
  ];
  const observed = { maxTotal: totalSpec(world), minAvailable: totalAvailable(world) };
  for (let reconcile = 0; reconcile < 100; reconcile++) {
    const plan = planRollingUpdate(d, world.newSet, world.oldSets);
    applyActions(world, plan.actions);
    observed.maxTotal = Math.max(observed.maxTotal, totalSpec(world));
    observed.minAvailable = Math.min(observed.minAvailable, totalAvailable(world));
    if (
      plan.step === 'steady' &&
      (!newPodsBecomeAvailable || world.newSet.availableReplicas === world.newSet.specReplicas)
    ) {
      break;
    }
    if (plan.step !== 'steady') {
      history.push({
        step: plan.step,
        newSpec: world.newSet.specReplicas,
        oldSpec: totalSpec(world) - world.newSet.specReplicas,
      });
    }
    tick(world, newPodsBecomeAvailable);
  }
  return { world, history, observed };
}

describe('rolling update simulated step by step', () => {
  it('10 replicas, maxSurge 2, maxUnavailable 1: never above 12 pods or below 9 available', () => {
    const d = rollingDeployment(10, 2, 1);
    const { world, history, observed } = simulate(
      d,
      [replicaSet('old', 10, { creationTimestamp: oldTime })],
      true,
    );
    assert.ok(observed.maxTotal <= 12, `max total ${observed.maxTotal}`);
    assert.ok(observed.minAvailable >= 9, `min available ${observed.minAvailable}`);
    assert.equal(world.newSet.specReplicas, 10);
    assert.equal(world.newSet.availableReplicas, 10);
    assert.equal(world.oldSets[0]!.specReplicas, 0);
    assert.deepEqual(history.slice(0, 5), [
      { step: 'create', newSpec: 2, oldSpec: 10 },
      { step: 'scale-down-old', newSpec: 2, oldSpec: 9 },
      { step: 'scale-new', newSpec: 3, oldSpec: 9 },
      { step: 'scale-down-old', newSpec: 3, oldSpec: 6 },
      { step: 'scale-new', newSpec: 6, oldSpec: 6 },
    ]);
  });

  it('a new template that never becomes available leaves minAvailable old pods running', () => {
    const d = rollingDeployment(10, 2, 1);
    const { world, observed } = simulate(d, [replicaSet('old', 10, { creationTimestamp: oldTime })], false);
    assert.ok(observed.maxTotal <= 12);
    assert.equal(world.oldSets[0]!.specReplicas, 9);
    assert.equal(world.newSet.specReplicas, 3);
    assert.equal(totalAvailable(world), 9);
  });

  const configurations: [replicas: number, surge: number | string, unavailable: number | string][] = [
    [10, '25%', '25%'],
    [10, 0, 1],
    [10, 3, 0],
    [5, '100%', 0],
    [3, 1, 1],
    [1, 0, 1],
    [7, '30%', '10%'],
  ];
  for (const [replicas, surge, unavailable] of configurations) {
    it(`${replicas} replicas, maxSurge ${surge}, maxUnavailable ${unavailable}: completes within the bounds`, () => {
      const d = rollingDeployment(replicas, surge, unavailable);
      const oldSets = [
        replicaSet('older', 1, { creationTimestamp: olderTime }),
        replicaSet('old', replicas - 1, { creationTimestamp: oldTime }),
      ];
      const { world, observed } = simulate(d, oldSets, true);
      const bounds = resolveFenceposts(surge, unavailable, replicas);
      assert.ok(observed.maxTotal <= replicas + bounds.surge);
      assert.ok(observed.minAvailable >= replicas - bounds.unavailable);
      assert.equal(world.newSet.specReplicas, replicas);
      assert.deepEqual(
        world.oldSets.map((s) => s.specReplicas),
        [0, 0],
      );
    });
  }
});

describe('planRollingUpdate', () => {
  it('is steady once the rollout is done', () => {
    const d = rollingDeployment(3, 1, 1);
    assert.deepEqual(planRollingUpdate(d, replicaSet('new', 3), [replicaSet('old', 0)]), {
      step: 'steady',
      actions: [],
    });
  });
  it('scales the new set down when the deployment shrank', () => {
    const d = rollingDeployment(3, 1, 1);
    const step = planRollingUpdate(d, replicaSet('new', 5), []);
    assert.equal(step.step, 'scale-new');
    assert.equal(step.actions[0]?.to, 3);
  });
});
