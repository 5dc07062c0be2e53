// What the machine-backup controller, which records a Machine's VolumeBackup, and the volumebackup
// controller, which carries it out, agree on besides the VolumeBackup's spec and status.
import { type Machine, SKIP_BACKUP_ANNOTATION } from '../../apis/index.ts';
import { MAX_OBJECT_NAME } from './names.ts';

/**
 * True once the Machine was let go without waiting for this backup (SKIP_BACKUP_ANNOTATION): a
 * condition type of VolumeBackups.
 */
export const SKIPPED = 'Skipped';

/**
 * True while every backup claim of a Completed VolumeBackup exists, is Bound and is not being
 * deleted: what a restore needs. False names the first claim that is not. A condition type of
 * VolumeBackups.
 */
export const RESTORABLE = 'Restorable';

const UID_PART_LENGTH = 8;

/**
 * The VolumeBackup of a Machine: `<machine>-<first 8 hex digits of its uid>`. A new Machine of the
 * same name has a new uid, hence a new backup; the same Machine always maps to the same one.
 */
export function backupName(machine: Pick<Machine, 'metadata'>): string {
  const uidPart = (machine.metadata.uid ?? '').replace(/-/g, '').slice(0, UID_PART_LENGTH);
  const name = machine.metadata.name ?? '';
  const room = MAX_OBJECT_NAME - UID_PART_LENGTH - 1;
  const prefix = name.length <= room ? name : name.slice(0, room).replace(/[-.]+$/, '');
  return `${prefix}-${uidPart}`;
}

/** Whether the Machine is to be deleted without a backup, whatever its policy. */
export function skipRequested(machine: Pick<Machine, 'metadata'>): boolean {
  return machine.metadata.annotations?.[SKIP_BACKUP_ANNOTATION] === 'true';
}
