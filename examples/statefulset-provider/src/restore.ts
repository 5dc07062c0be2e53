// Restoring a volume from a VolumeBackup before the StatefulSet exists: where a restore stands (pure)
// and the Job that copies the backup claim into the volume's claim.
import type { V1Job, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { STATEFULSET_MACHINE, type StatefulSetMachine } from './api.ts';
import {
  controllerReference,
  jobOutcome,
  type MachineVolume,
  restoreSource,
  type VolumeBackup,
  volumeCopyPodTemplate,
} from './basic-operator.ts';
import {
  claimName,
  RESTORED_FROM_ANNOTATION,
  ROLE_LABEL,
  restoredFromValue,
  restoreJobName,
  volumeLabels,
} from './names.ts';

/** Pod-level retries of a restore Job before it counts as failed. */
export const RESTORE_BACKOFF_LIMIT = 3;

export type RestoreState =
  /** The volume has no restoreFrom. */
  | { kind: 'none' }
  /** The claim carries RESTORED_FROM_ANNOTATION: done, whatever becomes of the Job or the backup. */
  | { kind: 'restored' }
  /** The restore Job succeeded: mark the claim, then delete the Job. */
  | { kind: 'succeeded'; jobName: string }
  /** The backup is Completed: make the claim (if missing) and the Job copying this backup claim. */
  | { kind: 'start'; backupClaimName: string }
  | { kind: 'copying'; message: string }
  /** The VolumeBackup is missing or not Completed yet: waiting, not failed. */
  | { kind: 'waiting'; reason: 'BackupNotFound' | 'WaitingForBackup'; message: string }
  /** Terminal: nothing changes this without a person. */
  | { kind: 'failed'; reason: 'BackupFailed' | 'BackupVolumeNotFound' | 'RestoreFailed'; message: string };

export function restoreState(
  volume: MachineVolume,
  claim: V1PersistentVolumeClaim | undefined,
  backup: VolumeBackup | undefined,
  job: V1Job | undefined,
): RestoreState {
  const source = volume.restoreFrom;
  if (!source) return { kind: 'none' };
  if (claim?.metadata?.annotations?.[RESTORED_FROM_ANNOTATION] === restoredFromValue(source)) {
    return { kind: 'restored' };
  }
  const what = `volume ${volume.name} restores from VolumeBackup ${source.volumeBackup}`;
  if (job) {
    const jobName = job.metadata?.name ?? '';
    const outcome = jobOutcome(job);
    if (outcome?.done === 'succeeded') return { kind: 'succeeded', jobName };
    if (outcome?.done === 'failed') {
      return {
        kind: 'failed',
        reason: 'RestoreFailed',
        message: `${what}: restore Job ${jobName} failed (${outcome.message}); delete the Job to try again`,
      };
    }
    return { kind: 'copying', message: `${what}: copying the data (Job ${jobName})` };
  }
  const offered = restoreSource(what, source, backup);
  return offered.kind === 'ready' ? { kind: 'start', backupClaimName: offered.backupClaimName } : offered;
}

/**
 * Copies the backup claim into the volume's claim with the project's volume-copy pod (the one the
 * VolumeBackup controller backs up with). activeDeadlineSeconds ends a copy that cannot run or
 * hangs: the Job fails and the restore is a terminal failure instead of a wait without end.
 */
export function desiredRestoreJob(
  machine: StatefulSetMachine,
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
      ownerReferences: [controllerReference(machine, STATEFULSET_MACHINE)],
    },
    spec: {
      backoffLimit: RESTORE_BACKOFF_LIMIT,
      activeDeadlineSeconds,
      template: volumeCopyPodTemplate(image, backupClaimName, claimName(machine, volume), labels),
    },
  };
}
