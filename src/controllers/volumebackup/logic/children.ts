// The backup claims and copy Jobs of a VolumeBackup, built from it and the source claim (pure).
import type { V1Job, V1PersistentVolumeClaim, V1PodTemplateSpec } from '@kubernetes/client-node';
import {
  type CopyPrivilege,
  VOLUME_BACKUP,
  type VolumeBackup,
  volumeCopyPodTemplate,
} from '../../../apis/index.ts';
import { controllerReference } from '../../../runtime/write/owner-refs.ts';
import type { CachedClaim } from '../cached.ts';
import {
  ATTEMPT_LABEL,
  BACKUP_CLAIM_FINALIZER,
  backupClaimName,
  childLabels,
  copyJobName,
  ROLE_LABEL,
} from '../names.ts';

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
  source: CachedClaim,
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
      // Held while the VolumeBackup exists (backup-claims.ts): a claim delete cannot take its bytes.
      finalizers: [BACKUP_CLAIM_FINALIZER],
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: size } },
      ...(storageClassName ? { storageClassName } : {}),
    },
  };
}

/** One attempt of a volume's copy: from which claim, with which image, as whom. */
export interface CopyAttemptSpec {
  image: string;
  sourceClaim: string;
  attempt: number;
  privilege: CopyPrivilege;
}

function copyLabels(backup: VolumeBackup, volume: string, attempt: number): Record<string, string> {
  return { ...childLabels(backup, volume), [ROLE_LABEL]: 'backup', [ATTEMPT_LABEL]: String(attempt) };
}

/** The pod template of a copy Job: the mover copies the source claim into the backup claim. */
export function copyJobTemplate(
  backup: VolumeBackup,
  volume: string,
  copy: CopyAttemptSpec,
): V1PodTemplateSpec {
  return volumeCopyPodTemplate({
    image: copy.image,
    sourceClaim: copy.sourceClaim,
    targetClaim: backupClaimName(backup, volume),
    labels: copyLabels(backup, volume, copy.attempt),
    privilege: copy.privilege,
  });
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
  copy: CopyAttemptSpec,
  activeDeadlineSeconds: number,
): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: copyJobName(backup, volume, copy.attempt),
      namespace: backup.metadata.namespace,
      labels: copyLabels(backup, volume, copy.attempt),
      ownerReferences: [controllerReference(backup, VOLUME_BACKUP)],
    },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds,
      template: copyJobTemplate(backup, volume, copy),
    },
  };
}
