// Names of the infra.basicoperator.dev/v1alpha1 API group.

export const INFRA_GROUP = 'infra.basicoperator.dev';
export const INFRA_VERSION = 'v1alpha1';
export const INFRA_API_VERSION = 'infra.basicoperator.dev/v1alpha1';

/** Held on a Machine whose backup policy is OnDelete until its VolumeBackup has Completed. */
export const VOLUME_BACKUP_FINALIZER = 'infra.basicoperator.dev/volume-backup';
/** On a Machine, value "true": delete it without a backup, even when its policy is OnDelete. */
export const SKIP_BACKUP_ANNOTATION = 'infra.basicoperator.dev/skip-backup';
