// Whether the Machine controller may create or own a provider object for a Machine yet (pure).
import { type Machine, VOLUME_BACKUP_FINALIZER } from '../../../apis/index.ts';
import { isBeingDeleted } from '../../../runtime/client/object.ts';

/** The reason while creation waits for the machine-backup controller's finalizer. */
export const WAITING_FOR_BACKUP_FINALIZER = 'WaitingForBackupFinalizer';

/**
 * Why nothing may be created or owned for `machine` yet, or undefined when it may. A Machine whose
 * backup policy is OnDelete (the default) gets no provider object (neither a PodMachine made for it
 * nor the ownership of the one it references) until it carries the finalizer
 * infra.basicoperator.dev/volume-backup: a deletion before that would let the Machine go without a
 * backup, and its data with it. The finalizer's arrival is a Machine update, which wakes the
 * controller; no requeue is needed while waiting.
 */
export function creationBlocked(machine: Machine): string | undefined {
  if (isBeingDeleted(machine)) return undefined;
  if ((machine.spec.backup?.policy ?? 'OnDelete') !== 'OnDelete') return undefined;
  if (machine.metadata.finalizers?.includes(VOLUME_BACKUP_FINALIZER)) return undefined;
  return `backup policy is OnDelete: waiting for the VolumeBackup controller to add the finalizer ${VOLUME_BACKUP_FINALIZER} before creating or owning the provider object`;
}
