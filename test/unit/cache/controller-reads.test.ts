// What each controller declares it reads of the Pods, Jobs and claims it caches (its `reads`, from
// src/controllers/<name>/cached.ts): the operator's cache keeps all of it (the union of the
// declarations, src/controllers/cache-transforms.ts), and a controller that reads a field its shapes
// drop does not compile (the @ts-expect-error lines, checked by tsc).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { copyTermination } from '../../../src/apis/index.ts';
import type * as replicaSet from '../../../src/controllers/basicreplicaset/cached.ts';
import { CONTROLLERS, operatorManagerOptions } from '../../../src/controllers/index.ts';
import type * as podMachine from '../../../src/controllers/podmachine/cached.ts';
import { POD_MACHINE_LABEL } from '../../../src/controllers/podmachine/names.ts';
import type * as volumeBackup from '../../../src/controllers/volumebackup/cached.ts';
import { keepFields, type Shape } from '../../../src/runtime/cache/keep-fields.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType, resourceId } from '../../../src/runtime/client/resource.ts';

function transformOf<T extends KubeObject>(type: ResourceType<T>): (obj: T) => T {
  const transform = operatorManagerOptions.cache?.byObject?.[resourceId(type)]?.transform;
  assert.ok(transform, `the operator transforms ${type.plural}`);
  return (obj) => transform(structuredClone(obj)) as T;
}

/** Whether `big` holds everything `small` does (the same values; lists element by element). */
function holds(big: unknown, small: unknown): boolean {
  if (typeof small !== 'object' || small === null) return isDeepStrictEqual(big, small);
  if (typeof big !== 'object' || big === null) return false;
  if (Array.isArray(small)) {
    return Array.isArray(big) && big.length === small.length && small.every((e, i) => holds(big[i], e));
  }
  return Object.entries(small).every(([k, v]) => holds((big as Record<string, unknown>)[k], v));
}

const at = new Date('2026-11-24T03:31:03Z');
const ended = { exitCode: 1, reason: 'Error', message: '{"v":1}', startedAt: at, finishedAt: at };

/** A pod with some of every field a controller reads, and more. */
function richPod(labels: Record<string, string>): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'p',
      namespace: 'ns',
      uid: 'u',
      resourceVersion: '1',
      creationTimestamp: at,
      deletionTimestamp: at,
      labels,
      annotations: { 'controller.kubernetes.io/pod-deletion-cost': '3', other: 'x' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Job', name: 'j', uid: 'j', controller: true }],
      finalizers: ['f'],
    },
    spec: { nodeName: 'n', containers: [{ name: 'machine', image: 'i' }] },
    status: {
      phase: 'Failed',
      reason: 'Evicted',
      message: 'm',
      podIP: '10.0.0.1',
      podIPs: [{ ip: '10.0.0.1' }],
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'r',
          message: 'm',
          lastTransitionTime: at,
          lastProbeTime: at,
        },
      ],
      containerStatuses: [
        {
          name: 'machine',
          image: 'i',
          imageID: 'sha',
          ready: false,
          started: true,
          restartCount: 2,
          state: { waiting: { reason: 'w', message: 'm' }, terminated: ended },
          lastState: { terminated: ended },
        },
        {
          name: 'copy',
          image: 'i',
          imageID: 'sha',
          ready: false,
          restartCount: 0,
          state: { terminated: ended },
        },
      ],
    },
  };
}

const job: V1Job = {
  metadata: {
    name: 'j',
    uid: 'j',
    labels: { role: 'restore' },
    annotations: { 'infra.basicoperator.dev/copy-report': '{}', other: 'x' },
  },
  spec: { template: { spec: { containers: [] } } },
  status: {
    conditions: [{ type: 'Failed', status: 'True', reason: 'r', message: 'm', lastTransitionTime: at }],
    completionTime: at,
    startTime: at,
    active: 1,
    succeeded: 0,
    failed: 1,
    ready: 0,
  },
};

const claim: V1PersistentVolumeClaim = {
  metadata: {
    name: 'c',
    finalizers: ['f'],
    annotations: {
      'infra.basicoperator.dev/restored-from': 'b/v',
      'infra.basicoperator.dev/restore-failure': '{}',
      other: 'x',
    },
  },
  spec: { resources: { requests: { storage: '1Gi' } }, storageClassName: 's', volumeName: 'pv' },
  status: { phase: 'Bound', capacity: { storage: '2Gi' }, accessModes: ['ReadWriteOnce'] },
};

describe('what the controllers declare they read of cached objects', () => {
  it('the cache keeps all of it: what each controller reads of a pod, claim or Job is in the cached object', () => {
    const plainPod = richPod({ app: 'web' });
    const ownPod = richPod({ [POD_MACHINE_LABEL]: 'web' });
    const check = <T extends KubeObject>(
      controller: string,
      type: ResourceType<T>,
      shape: Shape<T> | undefined,
      obj: T,
    ) => {
      if (!shape) return;
      const read = keepFields(shape)(obj);
      assert.ok(
        holds(transformOf(type)(obj), read),
        `${controller} reads of ${type.plural}: ${JSON.stringify(read)}`,
      );
    };
    const declaring = CONTROLLERS.filter((c) => c.reads !== undefined).map((c) => c.name);
    assert.deepEqual(declaring, ['basicreplicaset', 'podmachine', 'volumebackup']);
    for (const { name, reads } of CONTROLLERS) {
      check(name, CoreTypes.Pod, reads?.pods, plainPod);
      check(name, CoreTypes.Pod, reads?.pods, ownPod);
      const labelled = reads?.labelledPods;
      if (labelled) check(name, CoreTypes.Pod, labelled.shape, richPod({ [labelled.label]: 'web' }));
      check(name, CoreTypes.Job, reads?.jobs, job);
      check(name, CoreTypes.PersistentVolumeClaim, reads?.claims, claim);
    }
  });

  it('a controller cannot read a field its shapes drop, nor hand the object to a function that reads one', () => {
    const replicaSetPod: replicaSet.CachedPod = transformOf(CoreTypes.Pod)(richPod({ app: 'web' }));
    assert.equal(replicaSetPod.spec?.nodeName, 'n');
    // @ts-expect-error the BasicReplicaSet controller does not read a pod's containers
    assert.equal(replicaSetPod.spec?.containers, undefined);
    // @ts-expect-error nor its IPs
    assert.equal(replicaSetPod.status?.podIPs, undefined);
    // @ts-expect-error nor how its containers ended, which copyTermination reads
    copyTermination(replicaSetPod);

    const copyPod: volumeBackup.CachedPod = transformOf(CoreTypes.Pod)(richPod({ app: 'copy' }));
    assert.equal(copyTermination(copyPod)?.exitCode, 1);
    // @ts-expect-error the VolumeBackup controller does not read a copy pod's deletion cost
    assert.equal(copyPod.metadata?.annotations?.['controller.kubernetes.io/pod-deletion-cost'], '3');

    const ownPod: podMachine.CachedPod = transformOf(CoreTypes.Pod)(richPod({ [POD_MACHINE_LABEL]: 'web' }));
    assert.deepEqual(ownPod.status?.podIPs, [{ ip: '10.0.0.1' }]);
    // @ts-expect-error the PodMachine controller reads the IPs of its pods, not the deprecated podIP
    assert.equal(ownPod.status?.podIP, undefined);

    const restoreJob: podMachine.CachedJob = transformOf(CoreTypes.Job)(job);
    // @ts-expect-error the PodMachine controller does not read a Job's copy report (the VolumeBackup controller does)
    assert.equal(restoreJob.metadata?.annotations?.['infra.basicoperator.dev/copy-report'], '{}');
    const backupClaim: volumeBackup.CachedClaim = transformOf(CoreTypes.PersistentVolumeClaim)(claim);
    // @ts-expect-error the VolumeBackup controller does not read a claim's volume
    assert.equal(backupClaim.spec?.volumeName, undefined);
  });
});
