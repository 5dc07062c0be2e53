// The objects a PodMachine is realized as, built from its spec alone (pure, so they can be tested).
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import {
  type CopyPrivilege,
  copyPodProbe,
  type MachineVolume,
  machineContainer,
  machinePodSpecFields,
  POD_MACHINE,
  type PodMachine,
  type VolumeManifest,
  volumeCopyPodTemplate,
} from '../../../apis/index.ts';
import { controllerReference } from '../../../runtime/write/owner-refs.ts';
import { claimName, podMachineLabels, podName, ROLE_LABEL, restoreJobName, volumeLabels } from '../names.ts';

/** The container of the pod. */
export const MACHINE_CONTAINER = 'machine';
/** Pod-level retries of a restore Job before it counts as failed. */
const RESTORE_BACKOFF_LIMIT = 3;

export function volumes(podMachine: PodMachine): MachineVolume[] {
  return podMachine.spec.volumes ?? [];
}

/** A quantity string for a size given as a number of bytes or a quantity. */
export function storageRequest(size: string | number): string {
  return typeof size === 'number' ? String(size) : size;
}

export function desiredClaim(podMachine: PodMachine, volume: MachineVolume): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: claimName(podMachine, volume),
      namespace: podMachine.metadata.namespace,
      labels: volumeLabels(podMachine, volume),
      ownerReferences: [controllerReference(podMachine, POD_MACHINE)],
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: storageRequest(volume.size) } },
      ...(volume.storageClassName !== undefined ? { storageClassName: volume.storageClassName } : {}),
    },
  };
}

/**
 * The PodMachine's pod: its single container runs the image with the spec's command, args and pod
 * fields, mounting every claim. The security contexts pass Pod Security `restricted` unless the spec
 * asks for more (machinePodSecurityContext, machineContainerSecurityContext), and the pod mounts no
 * API token unless automountServiceAccountToken is true.
 */
export function desiredPod(podMachine: PodMachine): V1Pod {
  const list = volumes(podMachine);
  const container = machineContainer(
    MACHINE_CONTAINER,
    podMachine.spec,
    list.map((v) => ({ name: v.name, mountPath: v.mountPath })),
  );
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(podMachine),
      namespace: podMachine.metadata.namespace,
      labels: podMachineLabels(podMachine),
      ownerReferences: [controllerReference(podMachine, POD_MACHINE)],
    },
    spec: {
      restartPolicy: 'Always',
      ...machinePodSpecFields(podMachine.spec),
      containers: [container],
      volumes: list.map((v) => ({
        name: v.name,
        persistentVolumeClaim: { claimName: claimName(podMachine, v) },
      })),
    },
  };
}

/** How a restore copies: from which backup claim, with what, as whom, checked against what. */
export interface RestoreCopy {
  backupClaimName: string;
  /** The operator's image, which holds the mover (--backup-job-image). */
  image: string;
  activeDeadlineSeconds: number;
  privilege: CopyPrivilege;
  /** The backup's verified manifest of the volume: the restored tree must equal it. */
  expect?: VolumeManifest;
}

function restorePodTemplate(podMachine: PodMachine, volume: MachineVolume, copy: RestoreCopy) {
  return volumeCopyPodTemplate({
    image: copy.image,
    sourceClaim: copy.backupClaimName,
    targetClaim: claimName(podMachine, volume),
    labels: restoreLabels(podMachine, volume),
    privilege: copy.privilege,
    ...(copy.expect ? { expect: copy.expect } : {}),
  });
}

function restoreLabels(podMachine: PodMachine, volume: MachineVolume): Record<string, string> {
  return { ...volumeLabels(podMachine, volume), [ROLE_LABEL]: 'restore' };
}

/**
 * A Job that copies a backup claim into the volume's (new, empty) claim with the mover, which checks
 * the restored tree against `expect`. activeDeadlineSeconds ends a restore that cannot run (e.g. its
 * pods are refused) or hangs: the Job fails with DeadlineExceeded and the PodMachine reports
 * RestoreFailed instead of waiting forever.
 */
export function desiredRestoreJob(podMachine: PodMachine, volume: MachineVolume, copy: RestoreCopy): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: restoreJobName(podMachine, volume),
      namespace: podMachine.metadata.namespace,
      labels: restoreLabels(podMachine, volume),
      ownerReferences: [controllerReference(podMachine, POD_MACHINE)],
    },
    spec: {
      backoffLimit: RESTORE_BACKOFF_LIMIT,
      activeDeadlineSeconds: copy.activeDeadlineSeconds,
      template: restorePodTemplate(podMachine, volume, copy),
    },
  };
}

/**
 * The restore's copy pod as root, for admission to judge with a dry run before the Job is made
 * (copyPrivilege reads its answer): a namespace whose Pod Security level refuses it gets a non-root
 * copy instead.
 */
export function restoreProbePod(
  podMachine: PodMachine,
  volume: MachineVolume,
  copy: Omit<RestoreCopy, 'privilege'>,
): V1Pod {
  return copyPodProbe(
    restorePodTemplate(podMachine, volume, { ...copy, privilege: { mode: 'root' } }),
    podMachine.metadata.namespace,
    `${restoreJobName(podMachine, volume)}-`,
  );
}
