// Names and labels of the objects the PodMachine controller creates. Deterministic names make every
// create idempotent: a second attempt (after a restart, or before the cache caught up) gets
// AlreadyExists instead of a duplicate. An inline Machine's PodMachine has the Machine's name, so
// its claims and pod have the names the Machine controller gave them before PodMachines existed.
import {
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  type MachineVolume,
  type PodMachine,
  type VolumeManifest,
} from '../../apis/index.ts';
import { boundedName, MAX_LABEL_VALUE, MAX_OBJECT_NAME } from '../shared/names.ts';

/** On every object the controller creates: the PodMachine it belongs to (bounded to a label value). */
export const POD_MACHINE_LABEL = 'infra.basicoperator.dev/podmachine';
/** On claims and restore Jobs: the volume's name within the PodMachine. */
const VOLUME_LABEL = 'infra.basicoperator.dev/volume';
/** On restore Jobs (value `restore`). */
export const ROLE_LABEL = 'infra.basicoperator.dev/role';
/**
 * Set on a claim once its restore Job succeeded, as `<volumeBackup>/<volume>`. It is the record that
 * the claim holds restored data, so a deleted restore Job is never re-run over data the pod wrote.
 */
export const RESTORED_FROM_ANNOTATION = 'infra.basicoperator.dev/restored-from';
/**
 * Set with RESTORED_FROM_ANNOTATION, as `<files>:<bytes>:<digest>`: the restored tree as the copy pod
 * measured it, equal to the backup's recorded manifest (a record for people; nothing reads it).
 */
export const RESTORED_MANIFEST_ANNOTATION = 'infra.basicoperator.dev/restored-manifest';
/**
 * Set on a claim when its restore Job ended without a proven copy, before the Job's pods are deleted:
 * JSON `{job, reason, message}` (the Job's uid), so the reason and the copy pod's last words outlive
 * the pod. Only the Job of that uid is judged by it: a new Job (the old one deleted) starts afresh.
 */
export const RESTORE_FAILURE_ANNOTATION = 'infra.basicoperator.dev/restore-failure';

/** The single pod has the PodMachine's name. */
export function podName(podMachine: PodMachine): string {
  return podMachine.metadata.name ?? '';
}

export function claimName(podMachine: PodMachine, volume: Pick<MachineVolume, 'name'>): string {
  return boundedName(`${podMachine.metadata.name}-${volume.name}`, MAX_OBJECT_NAME);
}

/** Job names become label values on their pods, so they are bounded to 63 characters. */
export function restoreJobName(podMachine: PodMachine, volume: Pick<MachineVolume, 'name'>): string {
  return boundedName(`${podMachine.metadata.name}-${volume.name}-restore`, MAX_LABEL_VALUE);
}

/** The value of POD_MACHINE_LABEL for this PodMachine. */
export function podMachineLabelValue(podMachine: PodMachine): string {
  return boundedName(podMachine.metadata.name ?? '', MAX_LABEL_VALUE);
}

export function podMachineLabels(podMachine: PodMachine): Record<string, string> {
  return { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [POD_MACHINE_LABEL]: podMachineLabelValue(podMachine) };
}

export function volumeLabels(
  podMachine: PodMachine,
  volume: Pick<MachineVolume, 'name'>,
): Record<string, string> {
  return { ...podMachineLabels(podMachine), [VOLUME_LABEL]: volume.name };
}

/** The value of RESTORED_FROM_ANNOTATION for a restore source. */
export function restoredFromValue(source: { volumeBackup: string; volume: string }): string {
  return `${source.volumeBackup}/${source.volume}`;
}

/** A manifest as an annotation value (and as the mover's --expect): `<files>:<bytes>:<digest>`. */
export function manifestValue(manifest: VolumeManifest): string {
  return `${manifest.files}:${manifest.bytes}:${manifest.digest}`;
}
