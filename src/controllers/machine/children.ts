// The objects a Machine is realized as, built from its spec alone (pure, so they can be tested).
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { MACHINE, type Machine, type MachineVolume, volumeCopyPodTemplate } from '../../apis/index.ts';
import { controllerReference } from '../../runtime/write/owner-refs.ts';
import { claimName, machineLabels, podName, ROLE_LABEL, restoreJobName, volumeLabels } from './names.ts';

/** The container of the Machine pod. */
export const MACHINE_CONTAINER = 'machine';
/** Pod-level retries of a restore Job before it counts as failed. */
export const RESTORE_BACKOFF_LIMIT = 3;

export function volumes(machine: Machine): MachineVolume[] {
  return machine.spec.volumes ?? [];
}

/** A quantity string for a size given as a number of bytes or a quantity. */
export function storageRequest(size: string | number): string {
  return typeof size === 'number' ? String(size) : size;
}

export function desiredClaim(machine: Machine, volume: MachineVolume): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: claimName(machine, volume),
      namespace: machine.metadata.namespace,
      labels: volumeLabels(machine, volume),
      ownerReferences: [controllerReference(machine, MACHINE)],
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: storageRequest(volume.size) } },
      ...(volume.storageClassName !== undefined ? { storageClassName: volume.storageClassName } : {}),
    },
  };
}

export function desiredPod(machine: Machine): V1Pod {
  const list = volumes(machine);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(machine),
      namespace: machine.metadata.namespace,
      labels: machineLabels(machine),
      ownerReferences: [controllerReference(machine, MACHINE)],
    },
    spec: {
      restartPolicy: 'Always',
      containers: [
        {
          name: MACHINE_CONTAINER,
          image: machine.spec.image,
          ...(machine.spec.command ? { command: [...machine.spec.command] } : {}),
          ...(machine.spec.args ? { args: [...machine.spec.args] } : {}),
          volumeMounts: list.map((v) => ({ name: v.name, mountPath: v.mountPath })),
        },
      ],
      volumes: list.map((v) => ({
        name: v.name,
        persistentVolumeClaim: { claimName: claimName(machine, v) },
      })),
    },
  };
}

/**
 * A Job that copies a backup claim into the volume's (new, empty) claim. activeDeadlineSeconds ends
 * a restore that cannot run (e.g. its pods are refused) or hangs: the Job fails with
 * DeadlineExceeded and the Machine reports RestoreFailed instead of waiting forever.
 */
export function desiredRestoreJob(
  machine: Machine,
  volume: MachineVolume,
  backupClaimName: string,
  image: string,
  activeDeadlineSeconds: number,
): V1Job {
  const labels = { ...volumeLabels(machine, volume), [ROLE_LABEL]: 'restore' };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: restoreJobName(machine, volume),
      namespace: machine.metadata.namespace,
      labels,
      ownerReferences: [controllerReference(machine, MACHINE)],
    },
    spec: {
      backoffLimit: RESTORE_BACKOFF_LIMIT,
      activeDeadlineSeconds,
      template: volumeCopyPodTemplate(image, backupClaimName, claimName(machine, volume), labels),
    },
  };
}
