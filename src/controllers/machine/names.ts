// Names and labels of the objects the Machine controller creates. Deterministic names make every
// create idempotent: a second attempt (after a restart, or before the cache caught up) gets
// AlreadyExists instead of a duplicate.
import { createHash } from 'node:crypto';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, type Machine, type MachineVolume } from '../../apis/index.ts';

/** On every object the controller creates: the Machine it belongs to (bounded to a label value). */
const MACHINE_LABEL = 'infra.basicoperator.dev/machine';
/** On claims and restore Jobs: the volume's name within the Machine. */
const VOLUME_LABEL = 'infra.basicoperator.dev/volume';
/** On restore Jobs. */
export const ROLE_LABEL = 'infra.basicoperator.dev/role';
/**
 * Set on a claim once its restore Job succeeded, as `<volumeBackup>/<volume>`. It is the record that
 * the claim holds restored data, so a deleted restore Job is never re-run over data the Machine wrote.
 */
export const RESTORED_FROM_ANNOTATION = 'infra.basicoperator.dev/restored-from';

/** DNS subdomain names (pods, claims) may be 253 characters; label values and Job names 63. */
export const MAX_OBJECT_NAME = 253;
export const MAX_LABEL_VALUE = 63;

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

/** The Machine's single pod has the Machine's name. */
export function podName(machine: Machine): string {
  return machine.metadata.name ?? '';
}

export function claimName(machine: Machine, volume: Pick<MachineVolume, 'name'>): string {
  return boundedName(`${machine.metadata.name}-${volume.name}`, MAX_OBJECT_NAME);
}

/** Job names become label values on their pods, so they are bounded to 63 characters. */
export function restoreJobName(machine: Machine, volume: Pick<MachineVolume, 'name'>): string {
  return boundedName(`${machine.metadata.name}-${volume.name}-restore`, MAX_LABEL_VALUE);
}

export function machineLabels(machine: Machine): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    [MACHINE_LABEL]: boundedName(machine.metadata.name ?? '', MAX_LABEL_VALUE),
  };
}

export function volumeLabels(machine: Machine, volume: Pick<MachineVolume, 'name'>): Record<string, string> {
  return { ...machineLabels(machine), [VOLUME_LABEL]: volume.name };
}

/** The value of RESTORED_FROM_ANNOTATION for a restore source. */
export function restoredFromValue(source: { volumeBackup: string; volume: string }): string {
  return `${source.volumeBackup}/${source.volume}`;
}
