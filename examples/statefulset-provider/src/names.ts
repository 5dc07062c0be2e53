// Names and labels of what a StatefulSetMachine is realized as. Every name is derived from the
// object's, so creating twice (after a restart, or before the cache caught up) gets AlreadyExists
// instead of a duplicate.
import { createHash } from 'node:crypto';
import type { StatefulSetMachine } from './api.ts';

/**
 * The longest name a StatefulSetMachine may have (its CRD says so): kube-controller-manager labels
 * the pod `controller-revision-hash: <name>-<10 characters>`, and label values stop at 63.
 */
export const MAX_MACHINE_NAME = 52;

/** On the StatefulSet, its pod, its claims and the restore Jobs: the StatefulSetMachine's name. */
export const MACHINE_LABEL = 'examples.basicoperator.dev/statefulset-machine';
/** On claims and restore Jobs: the volume's name. */
const VOLUME_LABEL = 'examples.basicoperator.dev/volume';
/** On restore Jobs. */
export const ROLE_LABEL = 'examples.basicoperator.dev/role';
/**
 * On restore Jobs and their pods too, as on every volume-copy pod of the project (`backup` or
 * `restore`): what tools that look for copy pods go by (the local cluster's kwok gives such pods the
 * mover's report, as it runs no container).
 */
export const COPY_ROLE_LABEL = 'infra.basicoperator.dev/role';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'statefulset-provider';

/**
 * Set on a restored claim, as `<volumeBackup>/<volume>`, once its restore Job succeeded: the record
 * that the claim holds the backup, so a restore never runs again over data the Machine wrote.
 */
export const RESTORED_FROM_ANNOTATION = 'examples.basicoperator.dev/restored-from';
/**
 * Set with RESTORED_FROM_ANNOTATION, as `<files>:<bytes>:<digest>`: the restored tree as the copy pod
 * measured it, equal to the manifest the backup recorded (a record for people).
 */
export const RESTORED_MANIFEST_ANNOTATION = 'examples.basicoperator.dev/restored-manifest';

/** The container of the Machine's pod. */
export const CONTAINER_NAME = 'machine';

const nameOf = (machine: StatefulSetMachine): string => machine.metadata.name ?? '';

export function statefulSetName(machine: StatefulSetMachine): string {
  return nameOf(machine);
}

/** The StatefulSet's only pod: ordinal 0. */
export function podName(machine: StatefulSetMachine): string {
  return `${nameOf(machine)}-0`;
}

/** The claim kube-controller-manager makes from the volume's claim template for pod 0. */
export function claimName(machine: StatefulSetMachine, volume: { name: string }): string {
  return `${volume.name}-${nameOf(machine)}-0`;
}

/** Job names become label values on their pods: at most 63 characters. */
export function restoreJobName(machine: StatefulSetMachine, volume: { name: string }): string {
  return bounded(`${nameOf(machine)}-${volume.name}-restore`, 63);
}

export function providerID(machine: StatefulSetMachine): string {
  return `statefulset://${machine.metadata.namespace ?? ''}/${nameOf(machine)}`;
}

/** Selects the StatefulSet's pod; also on everything else made for the machine. */
export function selectorLabels(machine: StatefulSetMachine): Record<string, string> {
  return { [MACHINE_LABEL]: nameOf(machine) };
}

export function machineLabels(machine: StatefulSetMachine): Record<string, string> {
  return { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, ...selectorLabels(machine) };
}

export function volumeLabels(machine: StatefulSetMachine, volume: { name: string }): Record<string, string> {
  return { ...machineLabels(machine), [VOLUME_LABEL]: volume.name };
}

export function restoredFromValue(source: { volumeBackup: string; volume: string }): string {
  return `${source.volumeBackup}/${source.volume}`;
}

/** `base`, or a prefix of it and 8 hex digits of its hash when it is longer than `max`. */
export function bounded(base: string, max: number): string {
  if (base.length <= max) return base;
  const hash = createHash('sha256').update(base).digest('hex').slice(0, 8);
  return `${base.slice(0, max - hash.length - 1).replace(/-+$/, '')}-${hash}`;
}

/** A manifest as an annotation value: `<files>:<bytes>:<digest>`, as the mover's --expect takes it. */
export function manifestValue(manifest: { files: number; bytes: number; digest: string }): string {
  return `${manifest.files}:${manifest.bytes}:${manifest.digest}`;
}
