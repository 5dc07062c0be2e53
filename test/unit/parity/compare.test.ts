import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { diffSnapshots, type SideState, snapshot, templateKey } from '../../parity/observe.ts';
import { hotControllers } from '../../parity/reconcile-rate.ts';
import { makeSides, type SetObject, type WorkloadObject } from '../../parity/sides.ts';

const [kcm, bo] = makeSides('s1');

function state(side: typeof kcm, extraPodLabels: Record<string, string> = {}): SideState {
  const labels = { 'app.kubernetes.io/instance': side.instance, 'app.kubernetes.io/name': 'web' };
  const set: SetObject = {
    metadata: {
      name: `${side.name}-abc`,
      uid: `${side.id}-set`,
      annotations: { [side.revisionAnnotation]: '2' },
    },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels: { ...labels, [side.hashLabel]: side.id === 'kcm' ? '5d8f' : '8a1c' } },
        spec: { containers: [{ name: 'app', image: 'pause:3.10' }] },
      },
    },
    status: { replicas: 1, readyReplicas: 1, availableReplicas: 1 },
  };
  const workload: WorkloadObject = {
    apiVersion: 'v1',
    kind: 'X',
    metadata: { name: side.name, generation: 1 },
    spec: { selector: { matchLabels: labels }, template: set.spec.template },
    status: {
      observedGeneration: 1,
      replicas: 1,
      availableReplicas: 1,
      conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }],
    },
  };
  const pod: V1Pod = {
    metadata: {
      name: 'p',
      labels: { ...set.spec.template.metadata?.labels, ...extraPodLabels },
      ownerReferences: [
        { apiVersion: 'v1', kind: side.setKind, name: 'x', uid: `${side.id}-set`, controller: true },
      ],
    },
  };
  return { side, at: 0, workload, sets: [set], pods: [pod] };
}

describe('parity comparison', () => {
  it('matches sets by template content, whatever their names, hashes and side labels', () => {
    assert.equal(
      templateKey(kcm, state(kcm).sets[0]!.spec.template),
      templateKey(bo, state(bo).sets[0]!.spec.template),
    );
    assert.deepEqual(diffSnapshots(snapshot(state(kcm)), snapshot(state(bo))), []);
  });

  it('ignores our own label domain on pods but reports any other extra label, readably', () => {
    const ours = state(bo, { 'apps.basicoperator.dev/replicaset-pod': 'x' });
    assert.deepEqual(diffSnapshots(snapshot(state(kcm)), snapshot(ours)), []);
    const managed = state(bo, { 'app.kubernetes.io/managed-by': 'basic-operator' });
    const diff = diffSnapshots(snapshot(state(kcm)), snapshot(managed));
    assert.equal(diff.length, 1);
    assert.match(
      diff[0]!,
      /^podLabels\[0\]: kcm=\(none\) bo=pod labels \{.*app\.kubernetes\.io\/managed-by=basic-operator/,
    );
    assert.deepEqual(diffSnapshots(snapshot(state(kcm)), snapshot(managed), ['podLabels']), []);
  });

  it('names the field and both values', () => {
    const ours = state(bo);
    ours.workload!.status!.conditions = [
      { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' },
    ];
    assert.deepEqual(diffSnapshots(snapshot(state(kcm)), snapshot(ours)), [
      'conditions.Available: kcm=True/MinimumReplicasAvailable bo=False/MinimumReplicasUnavailable',
    ]);
  });

  it("compares kcm's NewReplicaSetAvailable kept from before the rollout under way as in progress (seed 95)", () => {
    // Both sides rest on an unfinished rollout back to an existing set (created long before).
    const unfinished = (side: typeof kcm, reason: string, written: string, rolloutSince?: number) => {
      const st = state(side);
      st.sets[0]!.metadata.creationTimestamp = new Date('2026-01-01T00:00:00Z');
      st.workload!.spec.replicas = 2;
      st.workload!.status!.conditions = [
        { type: 'Progressing', status: 'True', reason, lastUpdateTime: written },
      ];
      return { ...st, ...(rolloutSince ? { rolloutSince } : {}) };
    };
    const stepAt = Date.parse('2026-01-01T00:10:00.400Z');
    const kept = unfinished(kcm, 'NewReplicaSetAvailable', '2026-01-01T00:09:58Z', stepAt);
    const updated = unfinished(bo, 'ReplicaSetUpdated', '2026-01-01T00:10:01Z', stepAt);
    assert.deepEqual(diffSnapshots(snapshot(kept), snapshot(updated)), []);
    // Written in the step's own second or later, or in a step that started no rollout: compared as is.
    const fresh = unfinished(kcm, 'NewReplicaSetAvailable', '2026-01-01T00:10:00Z', stepAt);
    assert.equal(diffSnapshots(snapshot(fresh), snapshot(updated)).length, 1);
    const noRollout = unfinished(kcm, 'NewReplicaSetAvailable', '2026-01-01T00:09:58Z');
    assert.equal(diffSnapshots(snapshot(noRollout), snapshot(updated)).length, 1);
  });

  it("dates our NewReplicaSetAvailable by status.lastProgressTime, as kcm's by lastUpdateTime (seed 247)", () => {
    // A Recreate rollout completed at 0 replicas in the step that created its set, then scaled to 3
    // of never-ready pods: both sides keep NewReplicaSetAvailable. metav1.Condition has no
    // lastUpdateTime; its lastTransitionTime is from the first Progressing=True, long before.
    const stepAt = Date.parse('2026-01-01T00:10:00.400Z');
    const resting = (side: typeof kcm) => {
      const st = state(side);
      st.sets[0]!.metadata.creationTimestamp = new Date('2026-01-01T00:10:00Z');
      st.workload!.spec.replicas = 3;
      return { ...st, rolloutSince: stepAt };
    };
    const theirs = resting(kcm);
    theirs.workload!.status!.conditions = [
      {
        type: 'Progressing',
        status: 'True',
        reason: 'NewReplicaSetAvailable',
        lastUpdateTime: '2026-01-01T00:10:01Z',
      },
    ];
    const ours = resting(bo);
    ours.workload!.status!.lastProgressTime = '2026-01-01T00:10:01Z';
    ours.workload!.status!.conditions = [
      {
        type: 'Progressing',
        status: 'True',
        reason: 'NewReplicaSetAvailable',
        lastTransitionTime: '2026-01-01T00:01:00Z',
      },
    ];
    assert.deepEqual(diffSnapshots(snapshot(theirs), snapshot(ours)), []);
  });

  it('flags a controller reconciling more than about once per object per second at rest', () => {
    const samples = [0, 1000, 2000].map((at) => ({
      at,
      counts: new Map([
        ['basicdeployment', at / 2],
        ['basicreplicaset', 1],
      ]),
    }));
    const hot = hotControllers(
      samples,
      0,
      new Map([
        ['basicdeployment', 1],
        ['basicreplicaset', 2],
      ]),
    );
    assert.equal(hot.length, 1);
    assert.match(hot[0]!, /^basicdeployment: 1000 reconciles in 2\.0s/);
  });
});
