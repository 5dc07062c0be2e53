import { MACHINE, type Machine, VOLUME_BACKUP, type VolumeBackup } from '../../apis/index.ts';
import { isBeingDeleted } from '../../runtime/client/object.ts';
import { CoreTypes } from '../../runtime/client/resource.ts';
import type { Manager } from '../../runtime/manager/manager.ts';
import { VolumeBackupReconciler } from './backup-reconciler.ts';
import type { CachedClaim, CachedJob, CachedPod } from './cached.ts';
import { MachineBackupReconciler } from './machine-backup-reconciler.ts';
import { registerVolumeBackupMetrics } from './metrics.ts';
import { backupName, skipRequested } from './names.ts';
import { DEFAULT_INITIAL_BACKOFF_MS, DEFAULT_MAX_ATTEMPTS, exponentialRetry } from './progress.ts';

/** Reconciles Machines: the finalizer, and the backup between deletion and release. */
export const MACHINE_BACKUP_CONTROLLER = 'machine-backup';
/** Reconciles VolumeBackups: backup claims and copy Jobs. */
export const VOLUME_BACKUP_CONTROLLER = 'volumebackup';

export interface VolumeBackupOptions {
  /** Image of the copy Jobs (--backup-job-image). */
  backupJobImage: string;
  /**
   * How long a VolumeBackup may take, from its startTime, before it fails with DeadlineExceeded
   * (--volume-copy-deadline).
   */
  volumeCopyDeadlineMs: number;
  /** Copy Jobs per volume at most (default 3). */
  maxCopyAttempts?: number;
  /** Pause after the first failed copy, doubling after each further one (default 10 s). */
  retryBackoffMs?: number;
}

/**
 * Both halves of the VolumeBackup controller: `machine-backup`, a second controller on Machines that
 * holds the finalizer and records a VolumeBackup when a Machine is deleted, and `volumebackup`, which
 * carries each VolumeBackup out. They talk only through the VolumeBackup's spec and status. The
 * operator registers each from its declaration (declaration.ts); tests register the pair with this.
 * @internal
 */
export function registerVolumeBackupController(manager: Manager, options: VolumeBackupOptions): void {
  registerMachineBackupController(manager);
  registerVolumeBackupJobsController(manager, options);
}

export function registerMachineBackupController(manager: Manager): void {
  const backups = manager.cache.informerFor<VolumeBackup>(VOLUME_BACKUP);
  manager
    .controller(MACHINE_BACKUP_CONTROLLER)
    // No predicate: the Machine controller's status (phase Stopped) and annotations matter here.
    .for(MACHINE)
    // Its one condition on the Machine, beside the Machine controller's: each owns its own fields.
    .status({ strategy: 'apply' })
    .watches<VolumeBackup>(VOLUME_BACKUP, (backup) =>
      backup.spec.machineName === undefined
        ? []
        : [{ namespace: backup.metadata.namespace ?? '', name: backup.spec.machineName }],
    )
    .complete(
      new MachineBackupReconciler({
        client: manager.client,
        backups,
        events: manager.eventsFor(MACHINE_BACKUP_CONTROLLER, MACHINE),
      }),
    );
}

export function registerVolumeBackupJobsController(manager: Manager, options: VolumeBackupOptions): void {
  const backups = manager.cache.informerFor<VolumeBackup>(VOLUME_BACKUP);
  registerVolumeBackupMetrics(manager.registry, () => backups.list());
  manager
    .controller(VOLUME_BACKUP_CONTROLLER)
    .for(VOLUME_BACKUP)
    .status()
    .owns(CoreTypes.PersistentVolumeClaim)
    .owns(CoreTypes.Job)
    // A Machine being let go without a backup: its VolumeBackup records the skip.
    .watches<Machine>(MACHINE, (machine) =>
      isBeingDeleted(machine) && skipRequested(machine)
        ? [{ namespace: machine.metadata.namespace ?? '', name: backupName(machine) }]
        : [],
    )
    .complete(
      new VolumeBackupReconciler({
        client: manager.client,
        machines: manager.cache.informerFor<Machine>(MACHINE),
        claims: manager.cache.informerFor<CachedClaim>(CoreTypes.PersistentVolumeClaim),
        jobs: manager.cache.informerFor<CachedJob>(CoreTypes.Job),
        pods: manager.cache.informerFor<CachedPod>(CoreTypes.Pod),
        events: manager.eventsFor(VOLUME_BACKUP_CONTROLLER, VOLUME_BACKUP),
        backupJobImage: options.backupJobImage,
        deadlineMs: options.volumeCopyDeadlineMs,
        retry: exponentialRetry(
          options.maxCopyAttempts ?? DEFAULT_MAX_ATTEMPTS,
          options.retryBackoffMs ?? DEFAULT_INITIAL_BACKOFF_MS,
        ),
      }),
    );
}
