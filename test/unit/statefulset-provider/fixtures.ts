// Objects and a harness for the StatefulSetMachine provider's unit tests.
import type {
  V1Job,
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodStatus,
  V1StatefulSet,
} from '@kubernetes/client-node';
import {
  STATEFULSET_MACHINE,
  type StatefulSetMachine,
  type StatefulSetMachineSpec,
} from '../../../examples/statefulset-provider/src/api.ts';
import {
  CONTROLLER_NAME,
  providerManagerOptions,
} from '../../../examples/statefulset-provider/src/controller.ts';
import { StatefulSetMachineReconciler } from '../../../examples/statefulset-provider/src/reconciler.ts';
import { STATEFUL_SET } from '../../../examples/statefulset-provider/src/statefulset.ts';
import {
  type BackedUpVolume,
  VOLUME_BACKUP,
  type VolumeBackup,
  type VolumeManifest,
} from '../../../src/apis/index.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { eventsFor } from '../../../src/runtime/events/index.ts';
import { FakeCluster } from '../../support/fake/cluster.ts';
import { harness } from '../../support/fake/harness.ts';

export const NOW = new Date('2026-01-01T12:00:00Z');

export function machine(spec: Partial<StatefulSetMachineSpec> = {}, name = 'db'): StatefulSetMachine {
  return {
    apiVersion: STATEFULSET_MACHINE.apiVersion,
    kind: STATEFULSET_MACHINE.kind,
    metadata: { name, namespace: 'ns', uid: 'a1b2c3d4-0000-1111-2222-333344445555', generation: 1 },
    spec: {
      image: 'app:1',
      volumes: [
        { name: 'data', size: '1Gi', mountPath: '/data' },
        { name: 'logs', size: 1048576, mountPath: '/logs', storageClassName: 'fast' },
      ],
      ...spec,
    },
  };
}

export const RESTORING: Partial<StatefulSetMachineSpec> = {
  volumes: [
    { name: 'data', size: '1Gi', mountPath: '/data', restoreFrom: { volumeBackup: 'old', volume: 'data' } },
  ],
};

export function withStopRequest(m: StatefulSetMachine): StatefulSetMachine {
  return {
    ...m,
    metadata: { ...m.metadata, annotations: { 'infra.basicoperator.dev/stop-requested': 'true' } },
  };
}

/** The manifest the backup recorded of volume data (what the mover measured of its copy). */
export const MANIFEST: VolumeManifest = { files: 3, bytes: 4096, digest: `sha256:${'a'.repeat(64)}` };
export const OTHER: VolumeManifest = { files: 2, bytes: 1024, digest: `sha256:${'b'.repeat(64)}` };

export function backup(
  phase: 'Pending' | 'Completed' | 'Failed',
  volumes: BackedUpVolume[] = [{ name: 'data', backupClaimName: 'old-data', manifest: MANIFEST }],
): VolumeBackup {
  return {
    apiVersion: VOLUME_BACKUP.apiVersion,
    kind: VOLUME_BACKUP.kind,
    metadata: { name: 'old', namespace: 'ns' },
    spec: { machineName: 'old', machineUID: 'u', volumes: [{ name: 'data', claimName: 'data-old-0' }] },
    status: { phase, ...(phase === 'Completed' ? { volumes } : {}) },
  };
}

/** What kube-controller-manager makes from the StatefulSet: the pod, with this status. */
export function statefulSetPod(set: V1StatefulSet, status: V1PodStatus): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${set.metadata?.name}-0`,
      namespace: set.metadata?.namespace,
      labels: set.spec?.template.metadata?.labels,
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          name: set.metadata?.name ?? '',
          uid: set.metadata?.uid ?? '',
          controller: true,
        },
      ],
    },
    spec: { containers: [{ name: 'machine', image: 'app:1' }] },
    status,
  };
}

/** ... and a claim of one of its templates. */
export function statefulSetClaim(
  set: V1StatefulSet,
  template: string,
  phase: string,
): V1PersistentVolumeClaim {
  const t = set.spec?.volumeClaimTemplates?.find((c) => c.metadata?.name === template);
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: `${template}-${set.metadata?.name}-0`,
      namespace: set.metadata?.namespace,
      labels: { ...t?.metadata?.labels, ...set.spec?.selector.matchLabels },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          name: set.metadata?.name ?? '',
          uid: set.metadata?.uid ?? '',
          controller: true,
        },
      ],
    },
    spec: t?.spec,
    status: { phase },
  };
}

export const RUNNING_AND_READY: V1PodStatus = {
  phase: 'Running',
  podIP: '10.0.0.7',
  podIPs: [{ ip: '10.0.0.7' }],
  conditions: [{ type: 'Ready', status: 'True' }],
};

export async function setup(m: StatefulSetMachine, ...seed: Array<(cluster: FakeCluster) => void>) {
  const cluster = new FakeCluster({ cache: providerManagerOptions.cache, now: () => NOW });
  cluster.seed(STATEFULSET_MACHINE, m);
  for (const s of seed) s(cluster);
  return harness<StatefulSetMachine>(
    cluster,
    { for: STATEFULSET_MACHINE },
    async (c, events) =>
      new StatefulSetMachineReconciler({
        client: c.kubeClient,
        machines: await c.informer(STATEFULSET_MACHINE),
        statefulSets: await c.informer(STATEFUL_SET),
        pods: await c.informer(CoreTypes.Pod),
        claims: await c.informer(CoreTypes.PersistentVolumeClaim),
        jobs: await c.informer(CoreTypes.Job),
        backups: await c.informer(VOLUME_BACKUP),
        events: eventsFor(events, CONTROLLER_NAME, STATEFULSET_MACHINE),
        restoreJobImage: 'basic-operator:dev',
        restoreDeadlineSeconds: 3600,
        now: () => NOW,
      }),
  );
}

/** The backup claim `old-data` the VolumeBackup controller made (the operator's label: not cached here). */
export function backupClaim(phase = 'Bound'): (cluster: FakeCluster) => void {
  return (cluster) =>
    cluster.seed(CoreTypes.PersistentVolumeClaim, {
      metadata: {
        name: 'old-data',
        namespace: 'ns',
        labels: { 'app.kubernetes.io/managed-by': 'basic-operator' },
      },
      status: { phase },
    });
}

/** What the mover writes as its termination message on success. */
export function copyReport(source: VolumeManifest, target: VolumeManifest): string {
  return JSON.stringify({ v: 1, source, target, copyMs: 40, manifestMs: 7 });
}

/** A pod of `job`, as the Job controller makes it, whose copy container ended with `exitCode`. */
export function copyPod(job: V1Job, name: string, exitCode: number, message?: string): V1Pod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      labels: job.spec?.template.metadata?.labels ?? {},
      ownerReferences: [
        {
          apiVersion: 'batch/v1',
          kind: 'Job',
          name: job.metadata?.name ?? '',
          uid: job.metadata?.uid ?? '',
          controller: true,
        },
      ],
    },
    spec: job.spec?.template.spec ?? { containers: [] },
    status: {
      phase: exitCode === 0 ? 'Succeeded' : 'Failed',
      containerStatuses: [
        {
          name: 'copy',
          image: 'basic-operator:dev',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode, ...(message !== undefined ? { message } : {}) } },
        },
      ],
    },
  };
}

/** Marks a Job finished, as the Job controller would. */
export function finished(job: V1Job, type: 'Complete' | 'Failed', reason = ''): V1Job {
  return { ...job, status: { conditions: [{ type, status: 'True', reason }] } };
}
