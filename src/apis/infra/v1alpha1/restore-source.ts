// What a VolumeBackup offers a provider that restores one volume from it (pure): every provider of
// the Machine infrastructure contract reads a restoreFrom the same way.
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { Kept, Shape } from '../../../runtime/cache/keep-fields.ts';
import type { VolumeRestoreSource } from './machine.ts';
import type { VolumeBackup, VolumeManifest } from './volumebackup.ts';

export type RestoreSource =
  /** The VolumeBackup is missing or not Completed yet: wait, it may still come. */
  | { kind: 'waiting'; reason: 'BackupNotFound' | 'WaitingForBackup'; message: string }
  /** Nothing changes this without a person: a terminal failure of the restore. */
  | { kind: 'failed'; reason: 'BackupFailed' | 'BackupVolumeNotFound' | 'BackupClaimLost'; message: string }
  /**
   * Copy from this backup claim; the restored tree must equal `manifest` (absent only for a backup
   * recorded before copies were verified).
   */
  | { kind: 'ready'; backupClaimName: string; manifest?: VolumeManifest };

/** What restoreSource reads of a backup claim: a cache that hands it claims keeps these fields. */
const BACKUP_CLAIM_READS = {
  metadata: { deletionTimestamp: 'shared' },
  status: { phase: 'shared' },
} as const satisfies Shape<V1PersistentVolumeClaim>;

/**
 * Where `source` stands in `backup` (the VolumeBackup it names, if it exists) and its backup claim
 * (`backupClaim`, undefined when there is none). `what` starts each message, e.g. "volume data
 * restores from VolumeBackup web-1a2b3c4d". A backup claim that is missing, being deleted or not
 * Bound fails the restore at once: nothing brings its bytes back by waiting.
 */
export function restoreSource(
  what: string,
  source: VolumeRestoreSource,
  backup: VolumeBackup | undefined,
  backupClaim: (
    backupClaimName: string,
  ) => Kept<V1PersistentVolumeClaim, typeof BACKUP_CLAIM_READS> | undefined,
): RestoreSource {
  if (!backup) {
    return {
      kind: 'waiting',
      reason: 'BackupNotFound',
      message: `${what}, which does not exist in this namespace; waiting for it to be created`,
    };
  }
  const phase = backup.status?.phase ?? 'Pending';
  if (phase === 'Failed') {
    return { kind: 'failed', reason: 'BackupFailed', message: `${what}, which has failed` };
  }
  if (phase !== 'Completed') {
    return {
      kind: 'waiting',
      reason: 'WaitingForBackup',
      message: `${what}, which is ${phase}; waiting for it to complete`,
    };
  }
  const backedUp = backup.status?.volumes?.find((v) => v.name === source.volume);
  if (!backedUp) {
    return {
      kind: 'failed',
      reason: 'BackupVolumeNotFound',
      message: `${what}, which has no volume named ${source.volume}`,
    };
  }
  const name = backedUp.backupClaimName;
  const claim = backupClaim(name);
  const lost = !claim
    ? 'does not exist'
    : claim.metadata?.deletionTimestamp
      ? 'is being deleted'
      : claim.status?.phase !== 'Bound'
        ? `is ${claim.status?.phase ?? 'Pending'}, not Bound`
        : undefined;
  if (lost) {
    return {
      kind: 'failed',
      reason: 'BackupClaimLost',
      message: `${what}, whose backup claim ${name} of volume ${source.volume} ${lost}; nothing can be restored from it`,
    };
  }
  return {
    kind: 'ready',
    backupClaimName: name,
    ...(backedUp.manifest ? { manifest: backedUp.manifest } : {}),
  };
}
