// What a VolumeBackup offers a provider that restores one volume from it (pure): every provider of
// the Machine infrastructure contract reads a restoreFrom the same way.
import type { VolumeRestoreSource } from './machine.ts';
import type { VolumeBackup } from './volumebackup.ts';

export type RestoreSource =
  /** The VolumeBackup is missing or not Completed yet: wait, it may still come. */
  | { kind: 'waiting'; reason: 'BackupNotFound' | 'WaitingForBackup'; message: string }
  /** Nothing changes this without a person: a terminal failure of the restore. */
  | { kind: 'failed'; reason: 'BackupFailed' | 'BackupVolumeNotFound'; message: string }
  /** Copy from this backup claim. */
  | { kind: 'ready'; backupClaimName: string };

/**
 * Where `source` stands in `backup` (the VolumeBackup it names, if it exists). `what` starts each
 * message, e.g. "volume data restores from VolumeBackup web-1a2b3c4d".
 */
export function restoreSource(
  what: string,
  source: VolumeRestoreSource,
  backup: VolumeBackup | undefined,
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
  return { kind: 'ready', backupClaimName: backedUp.backupClaimName };
}
