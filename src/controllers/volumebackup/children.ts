// The backup claims and copy Jobs of a VolumeBackup, built from it and the source claim (pure).
import type { V1Job, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { VOLUME_BACKUP, type VolumeBackup, volumeCopyPodTemplate } from '../../apis/index.ts';
import { controllerReference } from '../../runtime/write/owner-refs.ts';
import { ATTEMPT_LABEL, backupClaimName, childLabels, copyJobName, ROLE_LABEL } from './names.ts';

/** Used when the source claim does not say how big it is (it always does once admitted). */
export const FALLBACK_SIZE = '1Gi';

/**
 * A claim, owned by the VolumeBackup, as big as the source claim and of the same storage class.
 * "As big" is the source's provisioned capacity (status.capacity), which can exceed what it requested
 * (a 1Gi request bound to a 10Gi volume may hold 10Gi of data); the request stands in until the
 * claim reports a capacity.
 */
export function desiredBackupClaim(
  backup: VolumeBackup,
  volume: string,
  source: V1PersistentVolumeClaim,
): V1PersistentVolumeClaim {
  const size = source.status?.capacity?.storage ?? source.spec?.resources?.requests?.storage ?? FALLBACK_SIZE;
  const storageClassName = source.spec?.storageClassName;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: backupClaimName(backup, volume),
      namespace: backup.metadata.namespace,
      labels: childLabels(backup, volume),
      ownerReferences: [controllerReference(backup, VOLUME_BACKUP)],
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: size } },
      ...(storageClassName ? { storageClassName } : {}),
    },
  };
}

/**
 * One attempt at copying a source claim into its backup claim. backoffLimit 0: the controller, not
 * the Job, retries, with a new Job per attempt, so each attempt stays visible and counted.
 * activeDeadlineSeconds (what is left of the backup's deadline) ends a copy that cannot run or
 * hangs: the Job fails with DeadlineExceeded instead of waiting forever.
 */
export function desiredCopyJob(
  backup: VolumeBackup,
  volume: string,
  sourceClaimName: string,
  attempt: number,
  image: string,
  activeDeadlineSeconds: number,
): V1Job {
  const labels = { ...childLabels(backup, volume), [ROLE_LABEL]: 'backup', [ATTEMPT_LABEL]: String(attempt) };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: copyJobName(backup, volume, attempt),
      namespace: backup.metadata.namespace,
      labels,
      ownerReferences: [controllerReference(backup, VOLUME_BACKUP)],
    },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds,
      template: volumeCopyPodTemplate(image, sourceClaimName, backupClaimName(backup, volume), labels),
    },
  };
}
