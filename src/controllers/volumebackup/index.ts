import { MACHINE, type Machine, VOLUME_BACKUP, type VolumeBackup } from '../../apis/index.ts';
import { isBeingDeleted } from '../../runtime/client/object.ts';
import { CoreTypes } from '../../runtime/client/resource.ts';
import type { Manager } from '../../runtime/manager/manager.ts';
import { backupName, skipRequested } from '../shared/volume-backups.ts';
import type { CachedClaim, CachedJob, CachedPod } from './cached.ts';
import { DEFAULT_INITIAL_BACKOFF_MS, DEFAULT_MAX_ATTEMPTS, exponentialRetry } from './logic/progress.ts';
import { registerVolumeBackupMetrics } from './metrics.ts';
import { VolumeBackupReconciler } from './reconciler.ts';

export const CONTROLLER_NAME = 'volumebackup';

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
 * VolumeBackup: carries each VolumeBackup out with backup claims and copy Jobs. The VolumeBackups of
 * deleted Machines are recorded by the machine-backup controller; a Machine let go without a backup
 * (the skip annotation) wakes its VolumeBackup here, which records the skip.
 */
export function registerVolumeBackupController(manager: Manager, options: VolumeBackupOptions): void {
  const backups = manager.cache.informerFor<VolumeBackup>(VOLUME_BACKUP);
  registerVolumeBackupMetrics(manager.registry, () => backups.list());
  manager
    .controller(CONTROLLER_NAME)
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
        events: manager.eventsFor(CONTROLLER_NAME, VOLUME_BACKUP),
        backupJobImage: options.backupJobImage,
        deadlineMs: options.volumeCopyDeadlineMs,
        retry: exponentialRetry(
          options.maxCopyAttempts ?? DEFAULT_MAX_ATTEMPTS,
          options.retryBackoffMs ?? DEFAULT_INITIAL_BACKOFF_MS,
        ),
      }),
    );
}
