// Where the restore of one volume stands, from what the cache shows (pure).
import type { V1Job, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { jobOutcome, type MachineVolume, restoreSource, type VolumeBackup } from '../../apis/index.ts';
import { RESTORED_FROM_ANNOTATION, restoredFromValue } from './names.ts';

export type RestoreState =
  /** The volume has no restoreFrom: nothing to wait for. */
  | { kind: 'none' }
  /** The claim carries RESTORED_FROM_ANNOTATION: done, whatever happens to the Job or the backup. */
  | { kind: 'restored' }
  /** The restore Job succeeded; the claim is to be marked restored. */
  | { kind: 'job-succeeded' }
  /** The backup is ready: create the restore Job from this backup claim. */
  | { kind: 'start-job'; backupClaimName: string }
  | { kind: 'restoring'; message: string }
  /** Waiting for the VolumeBackup to appear or complete (transient): the PodMachine stays Pending. */
  | { kind: 'waiting'; reason: 'BackupNotFound' | 'WaitingForBackup'; message: string }
  /** Nothing will fix this without a change by a person: a terminal failure. */
  | {
      kind: 'failed';
      reason: 'BackupFailed' | 'BackupVolumeNotFound' | 'RestoreFailed';
      message: string;
      /** An object of someone else holds the restore Job's name. */
      foreign?: true;
    };

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
    const outcome = jobOutcome(job);
    if (outcome?.done === 'succeeded') return { kind: 'job-succeeded' };
    if (outcome?.done === 'failed') {
      return {
        kind: 'failed',
        reason: 'RestoreFailed',
        message: `${what}: restore Job ${job.metadata?.name} failed (${outcome.message}); delete the Job to try again`,
      };
    }
    return { kind: 'restoring', message: `${what}: copying data (Job ${job.metadata?.name})` };
  }
  const offered = restoreSource(what, source, backup);
  return offered.kind === 'ready' ? { kind: 'start-job', backupClaimName: offered.backupClaimName } : offered;
}
