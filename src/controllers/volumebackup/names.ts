// Names and labels of what the VolumeBackup controller creates. Every name is derived from its
// inputs, so a restarted operator finds (or re-creates under the same name) what it made before and
// never makes a second claim or Job for the same thing.
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, type VolumeBackup } from '../../apis/index.ts';
import { boundedName, MAX_LABEL_VALUE, MAX_OBJECT_NAME } from '../shared/names.ts';

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

export function backupClaimName(backup: Pick<VolumeBackup, 'metadata'>, volume: string): string {
  return boundedName(`${backup.metadata.name}-${volume}`, MAX_OBJECT_NAME);
}

/** Job names become label values on their pods, so they are bounded to 63 characters. */
export function copyJobName(backup: Pick<VolumeBackup, 'metadata'>, volume: string, attempt: number): string {
  return boundedName(`${backup.metadata.name}-${volume}-${attempt}`, MAX_LABEL_VALUE);
}

export function childLabels(backup: VolumeBackup, volume: string): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    [VOLUME_BACKUP_LABEL]: boundedName(backup.metadata.name ?? '', MAX_LABEL_VALUE),
    [VOLUME_LABEL]: volume,
  };
}
