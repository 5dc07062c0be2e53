import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { oldPodsRunning, planRecreate } from '../../../src/controllers/basicdeployment/logic/recreate.ts';
import { recreateDeployment, replicaSet } from './fixtures.ts';

describe('planRecreate', () => {
  const d = recreateDeployment(3);

  it('scales every old set that wants pods to 0 first', () => {
    const step = planRecreate(d, replicaSet('new', 0), [
      replicaSet('a', 2),
      replicaSet('b', 0),
      replicaSet('c', 1),
    ]);
    assert.equal(step.step, 'scale-down-old');
    assert.deepEqual(
      step.actions.map((a) => [a.name, a.from, a.to]),
      [
        ['a', 2, 0],
        ['c', 1, 0],
      ],
    );
    assert.deepEqual([step.actions[0]!.desiredReplicas, step.actions[0]!.maxReplicas], [3, 3]);
  });

  it('waits while old sets still report pods, terminating ones included', () => {
    assert.deepEqual(
      planRecreate(d, undefined, [replicaSet('a', 0, { statusReplicas: 1, availableReplicas: 0 })]),
      {
        step: 'wait-for-old-pods',
        actions: [],
      },
    );
    assert.equal(
      planRecreate(d, replicaSet('new', 0), [replicaSet('a', 0, { statusReplicas: 0, activeReplicas: 1 })])
        .step,
      'wait-for-old-pods',
    );
  });

  it('asks to create the new set with spec.replicas once old pods are gone', () => {
    assert.deepEqual(planRecreate(d, undefined, [replicaSet('a', 0)]), {
      step: 'create-new',
      replicas: 3,
      actions: [],
    });
    assert.deepEqual(planRecreate(d, undefined, []), { step: 'create-new', replicas: 3, actions: [] });
  });

  it('scales an existing new set to spec.replicas once old pods are gone', () => {
    const step = planRecreate(d, replicaSet('new', 0), [replicaSet('a', 0)]);
    assert.equal(step.step, 'scale-new');
    assert.deepEqual(
      step.actions.map((a) => [a.name, a.to]),
      [['new', 3]],
    );
    assert.deepEqual(planRecreate(d, replicaSet('new', 3), [replicaSet('a', 0)]), {
      step: 'scale-new',
      actions: [],
    });
  });

  it('never runs old and new pods together over a whole rollout', () => {
    const oldSet = replicaSet('old', 3);
    let newSet: ReturnType<typeof replicaSet> | undefined;
    for (let reconcile = 0; reconcile < 10; reconcile++) {
      const step = planRecreate(d, newSet, [oldSet]);
      if (step.step === 'create-new')
        newSet = replicaSet('new', step.replicas, { statusReplicas: 0, availableReplicas: 0 });
      for (const action of step.actions) {
        if (action.name === 'old') oldSet.specReplicas = action.to;
        if (action.name === 'new' && newSet) newSet.specReplicas = action.to;
      }
      assert.ok(!(oldSet.statusReplicas > 0 && (newSet?.specReplicas ?? 0) > 0), `step ${step.step}`);
      // The cluster catches up: old pods terminate, new pods start.
      oldSet.statusReplicas = oldSet.specReplicas;
      oldSet.availableReplicas = oldSet.specReplicas;
      if (newSet) newSet.statusReplicas = newSet.availableReplicas = newSet.specReplicas;
    }
    assert.equal(newSet?.specReplicas, 3);
    assert.equal(oldSet.specReplicas, 0);
  });
});

describe('oldPodsRunning', () => {
  it('looks at status.replicas, activeReplicas and terminatingReplicas', () => {
    assert.equal(oldPodsRunning([]), false);
    assert.equal(oldPodsRunning([replicaSet('a', 0)]), false);
    assert.equal(oldPodsRunning([replicaSet('a', 0, { statusReplicas: 2 })]), true);
    assert.equal(oldPodsRunning([replicaSet('a', 0, { activeReplicas: 1 })]), true);
    // status.replicas no longer counts pods being deleted; they still run until they are gone.
    assert.equal(oldPodsRunning([replicaSet('a', 0, { terminatingReplicas: 1 })]), true);
  });
});
