// The StatefulSet a StatefulSetMachine is realized as, from its spec alone (pure).
import type { V1PersistentVolumeClaim, V1Pod, V1PodSpec, V1StatefulSet } from '@kubernetes/client-node';
import { STATEFULSET_MACHINE, type StatefulSetMachine } from './api.ts';
import {
  controllerReference,
  type MachineVolume,
  machineContainer,
  machinePodSpecFields,
  resourceOf,
} from './basic-operator.ts';
import {
  CONTAINER_NAME,
  claimName,
  machineLabels,
  podName,
  selectorLabels,
  statefulSetName,
  volumeLabels,
} from './names.ts';

export const STATEFUL_SET = resourceOf<V1StatefulSet>()({
  group: 'apps',
  version: 'v1',
  kind: 'StatefulSet',
  plural: 'statefulsets',
  namespaced: true,
});

export function volumes(machine: StatefulSetMachine): MachineVolume[] {
  return machine.spec.volumes ?? [];
}

/** The claim's spec, the same whether kube-controller-manager makes it or a restore does first. */
function claimSpec(volume: MachineVolume): V1PersistentVolumeClaim['spec'] {
  return {
    accessModes: ['ReadWriteOnce'],
    resources: { requests: { storage: String(volume.size) } },
    ...(volume.storageClassName !== undefined ? { storageClassName: volume.storageClassName } : {}),
  };
}

/**
 * The pod template's spec: one container with the image, command, args and pod fields, mounting a
 * claim template per volume. The security contexts are the PodMachine's (src/apis): what the spec
 * says, over defaults that pass Pod Security `restricted`; no API token unless asked for.
 */
function podSpec(machine: StatefulSetMachine): V1PodSpec {
  const mounts = volumes(machine).map((v) => ({ name: v.name, mountPath: v.mountPath }));
  return {
    ...machinePodSpecFields(machine.spec),
    containers: [machineContainer(CONTAINER_NAME, machine.spec, mounts)],
  };
}

/**
 * One replica (0 once a stop was requested), one claim template per volume. No Service: a
 * StatefulSet needs none (serviceName is optional), and the contract's address is the pod's IP.
 * The claims outlive a scale-down (whenScaled: Retain), which is what the stop handshake needs, and
 * go with the StatefulSet (whenDeleted: Delete), which goes with the StatefulSetMachine.
 */
export function desiredStatefulSet(machine: StatefulSetMachine, replicas: 0 | 1): V1StatefulSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {
      name: statefulSetName(machine),
      namespace: machine.metadata.namespace,
      labels: machineLabels(machine),
      ownerReferences: [controllerReference(machine, STATEFULSET_MACHINE)],
    },
    spec: {
      replicas,
      selector: { matchLabels: selectorLabels(machine) },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
      template: { metadata: { labels: machineLabels(machine) }, spec: podSpec(machine) },
      volumeClaimTemplates: volumes(machine).map((v) => ({
        metadata: { name: v.name, labels: volumeLabels(machine, v) },
        spec: claimSpec(v),
      })),
    },
  };
}

/**
 * The pod kube-controller-manager would make from `set`'s template (with a volume per claim
 * template), for a dry-run create: admission (Pod Security, a quota, a webhook) answers for it as it
 * answers kube-controller-manager, whose refusals only its Events on the StatefulSet tell.
 */
export function templatePod(machine: StatefulSetMachine, set: V1StatefulSet): V1Pod {
  const template = set.spec?.template;
  const claims = (set.spec?.volumeClaimTemplates ?? []).map((t) => t.metadata?.name ?? '');
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(machine),
      namespace: machine.metadata.namespace,
      labels: { ...template?.metadata?.labels },
    },
    spec: {
      ...structuredClone(template?.spec ?? { containers: [] }),
      volumes: [
        ...(template?.spec?.volumes ?? []),
        ...claims.map((name) => ({
          name,
          persistentVolumeClaim: { claimName: claimName(machine, { name }) },
        })),
      ],
    },
  };
}

/**
 * A claim made before the StatefulSet, for a volume restored from a backup: the name and spec
 * kube-controller-manager would give it, so the StatefulSet's pod uses it as its own. It is
 * controlled by the StatefulSetMachine, which the StatefulSet controller respects (it leaves a claim
 * with another controller alone), so it goes when the StatefulSetMachine goes, as the others do.
 */
export function desiredRestoreClaim(
  machine: StatefulSetMachine,
  volume: MachineVolume,
): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: claimName(machine, volume),
      namespace: machine.metadata.namespace,
      labels: volumeLabels(machine, volume),
      ownerReferences: [controllerReference(machine, STATEFULSET_MACHINE)],
    },
    spec: claimSpec(volume),
  };
}
