// Whether the Machine controller may create anything for a Machine yet (pure).
import { type Machine, VOLUME_BACKUP_FINALIZER } from '../../apis/index.ts';
import { isBeingDeleted } from '../../runtime/client/object.ts';

/** The Ready reason while creation waits for the VolumeBackup controller's finalizer. */
export const WAITING_FOR_BACKUP_FINALIZER = 'WaitingForBackupFinalizer';

/**
 * Why nothing may be created for `machine` yet, or undefined when creation may go ahead. A Machine
 * whose backup policy is OnDelete (the default) gets no claim, restore Job or pod until it carries
 * the finalizer infra.basicoperator.dev/volume-backup: a deletion before that would let the Machine
 * go without a backup, and its data with it. The finalizer's arrival is a Machine update, which
 * wakes the controller; no requeue is needed while waiting.
 */
export function creationBlocked(machine: Machine): string | undefined {
  if (isBeingDeleted(machine)) return undefined;
  if ((machine.spec.backup?.policy ?? 'OnDelete') !== 'OnDelete') return undefined;
  if (machine.metadata.finalizers?.includes(VOLUME_BACKUP_FINALIZER)) return undefined;
  return `backup policy is OnDelete: waiting for the VolumeBackup controller to add the finalizer ${VOLUME_BACKUP_FINALIZER} before creating claims or a pod`;
}

/** Whether the finalizer came or went between two versions of a Machine. */
export function backupFinalizerChanged(
  oldObj: { metadata?: { finalizers?: string[] } },
  newObj: { metadata?: { finalizers?: string[] } },
): boolean {
  const had = oldObj.metadata?.finalizers?.includes(VOLUME_BACKUP_FINALIZER) ?? false;
  const has = newObj.metadata?.finalizers?.includes(VOLUME_BACKUP_FINALIZER) ?? false;
  return had !== has;
}
