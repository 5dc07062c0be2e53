// Whether a VolumeBackup's claims still hold its bytes, and when their finalizer may go (pure).

import { VOLUME_BACKUP, type VolumeBackup } from '../../../apis/index.ts';
import { controllerRefOf, isBeingDeleted } from '../../../runtime/client/object.ts';
import type { ConditionInput } from '../../../runtime/write/conditions.ts';
import { hasFinalizer } from '../../../runtime/write/finalizers.ts';
import { RESTORABLE } from '../../shared/volume-backups.ts';
import type { CachedClaim } from '../cached.ts';
import { BACKUP_CLAIM_FINALIZER, backupClaimName } from '../names.ts';

/**
 * The Restorable condition of a Completed backup, given its claims by name (as the cache shows them).
 * A claim asked to be deleted stays while the backup exists (BACKUP_CLAIM_FINALIZER), but no pod can
 * mount it any more, so nothing can be restored from it.
 */
export function restorableCondition(
  backup: VolumeBackup,
  claim: (name: string) => CachedClaim | undefined,
): ConditionInput {
  const generation = backup.metadata.generation;
  const base = { type: RESTORABLE, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
  for (const volume of backup.spec.volumes) {
    const name = backupClaimName(backup, volume.name);
    const found = claim(name);
    const lost = !found
      ? { reason: 'BackupClaimMissing', what: 'does not exist' }
      : isBeingDeleted(found)
        ? {
            reason: 'BackupClaimDeleting',
            what: 'was asked to be deleted: it is kept while this VolumeBackup exists, but no pod can mount it any more',
          }
        : found.status?.phase !== 'Bound'
          ? { reason: 'BackupClaimNotBound', what: `is ${found.status?.phase ?? 'Pending'}, not Bound` }
          : undefined;
    if (lost) {
      return {
        ...base,
        status: 'False',
        reason: lost.reason,
        message: `backup claim ${name} of volume ${volume.name} ${lost.what}; nothing can be restored from it`,
      };
    }
  }
  return {
    ...base,
    status: 'True',
    reason: 'BackupClaimsBound',
    message: `all ${backup.spec.volumes.length} backup claims are Bound`,
  };
}

/**
 * Whether the finalizer of a backup claim may go: the claim is being deleted and the VolumeBackup
 * that owns it is gone or going (`live`: the VolumeBackup of its owner's name as cached, if any).
 * While its VolumeBackup lives, a backup claim's bytes stay.
 */
export function mayReleaseClaim(claim: CachedClaim, live: VolumeBackup | undefined): boolean {
  if (!isBeingDeleted(claim) || !hasFinalizer(claim, BACKUP_CLAIM_FINALIZER)) return false;
  const owner = controllerRefOf(claim);
  if (owner?.kind !== VOLUME_BACKUP.kind) return false;
  return !live || live.metadata.uid !== owner.uid || isBeingDeleted(live);
}
