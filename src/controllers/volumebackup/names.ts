// Names and labels of what the VolumeBackup controller creates. Every name is derived from its
// inputs, so a restarted operator finds (or re-creates under the same name) what it made before and
// never makes a second VolumeBackup, claim or Job for the same thing.
import { createHash } from 'node:crypto';
import {
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  type Machine,
  SKIP_BACKUP_ANNOTATION,
  type VolumeBackup,
} from '../../apis/index.ts';

/** On a VolumeBackup: the name of the Machine it backs up (bounded to a label value). */
const MACHINE_LABEL = 'infra.basicoperator.dev/machine';
/** On a VolumeBackup: the uid of that Machine. */
const MACHINE_UID_LABEL = 'infra.basicoperator.dev/machine-uid';
/** On backup claims and copy Jobs: the VolumeBackup they belong to. */
const VOLUME_BACKUP_LABEL = 'infra.basicoperator.dev/volume-backup';
export const VOLUME_LABEL = 'infra.basicoperator.dev/volume';
/** On copy Jobs: 1 for the first Job of a volume, 2 for its first retry, and so on. */
export const ATTEMPT_LABEL = 'infra.basicoperator.dev/attempt';
export const ROLE_LABEL = 'infra.basicoperator.dev/role';
/**
 * On a copy Job whose pod succeeded: the pod's report (the source's and the copy's manifests, equal),
 * written by this controller before it deletes the pod. The Job is the record of its attempt.
 */
export const COPY_REPORT_ANNOTATION = 'infra.basicoperator.dev/copy-report';
/** On a copy Job whose copy is not proven: why (the pod's last words, or what was missing). */
export const COPY_FAILURE_ANNOTATION = 'infra.basicoperator.dev/copy-failure';
/**
 * On backup claims: held while their VolumeBackup exists, so a `kubectl delete pvc` cannot take a
 * backup's bytes (the claim stays, Terminating, until its VolumeBackup goes).
 */
export const BACKUP_CLAIM_FINALIZER = 'infra.basicoperator.dev/backup-claim';

export const MAX_OBJECT_NAME = 253;
export const MAX_LABEL_VALUE = 63;
const UID_PART_LENGTH = 8;

/**
 * `base` if it fits in `max` characters; otherwise a prefix of it plus `-` and 8 hex digits of its
 * hash, so long names stay unique and valid (no trailing `-` or `.` before the suffix).
 */
export function boundedName(base: string, max: number): string {
  if (base.length <= max) return base;
  const hash = createHash('sha256').update(base).digest('hex').slice(0, 8);
  const prefix = base.slice(0, max - hash.length - 1).replace(/[-.]+$/, '');
  return `${prefix}-${hash}`;
}

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

export function backupClaimName(backup: Pick<VolumeBackup, 'metadata'>, volume: string): string {
  return boundedName(`${backup.metadata.name}-${volume}`, MAX_OBJECT_NAME);
}

/** Job names become label values on their pods, so they are bounded to 63 characters. */
export function copyJobName(backup: Pick<VolumeBackup, 'metadata'>, volume: string, attempt: number): string {
  return boundedName(`${backup.metadata.name}-${volume}-${attempt}`, MAX_LABEL_VALUE);
}

export function backupLabels(machine: Machine): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    [MACHINE_LABEL]: boundedName(machine.metadata.name ?? '', MAX_LABEL_VALUE),
    [MACHINE_UID_LABEL]: machine.metadata.uid ?? '',
  };
}

export function childLabels(backup: VolumeBackup, volume: string): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    [VOLUME_BACKUP_LABEL]: boundedName(backup.metadata.name ?? '', MAX_LABEL_VALUE),
    [VOLUME_LABEL]: volume,
  };
}

export function skipRequested(machine: Pick<Machine, 'metadata'>): boolean {
  return machine.metadata.annotations?.[SKIP_BACKUP_ANNOTATION] === 'true';
}
