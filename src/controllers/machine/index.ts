import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { MACHINE, type Machine, VOLUME_BACKUP, type VolumeBackup } from '../../apis/index.ts';
import { CoreTypes } from '../../runtime/client/resource.ts';
import type { Predicate } from '../../runtime/controller/predicates.ts';
import type { Request } from '../../runtime/controller/reconciler.ts';
import type { Manager } from '../../runtime/manager/manager.ts';
import { backupFinalizerChanged } from './gate.ts';
import { MachineReconciler } from './reconciler.ts';

export const CONTROLLER_NAME = 'machine';

/**
 * Machine updates worth a reconcile: a spec change (generation), the start of deletion, or the
 * backup finalizer coming or going (creation waits for it, see gate.ts). Status writes (its own, and
 * the VolumeBackup controller's condition) and other finalizer edits are ignored.
 */
export const specOrDeletionChanged: Predicate = {
  update: (oldObj, newObj) =>
    oldObj.metadata?.generation !== newObj.metadata?.generation ||
    (oldObj.metadata?.deletionTimestamp == null) !== (newObj.metadata?.deletionTimestamp == null) ||
    backupFinalizerChanged(oldObj, newObj),
};

export interface MachineOptions {
  /** Image of the restore Jobs (--backup-job-image). */
  backupJobImage: string;
  /** How long a restore Job may run (--volume-copy-deadline). */
  volumeCopyDeadlineMs: number;
}

/**
 * Machine: one PersistentVolumeClaim per volume plus one Pod, all controlled by the Machine.
 * Reconciles on spec changes and deletion (generation), on changes to its claims, pod and restore
 * Jobs, and on changes to a VolumeBackup one of its volumes restores from.
 */
export function registerMachineController(manager: Manager, options: MachineOptions): void {
  const machines = manager.cache.informerFor<Machine>(MACHINE);
  const backups = manager.cache.informerFor<VolumeBackup>(VOLUME_BACKUP);
  const restoringFrom = (backup: VolumeBackup): Request[] => {
    const namespace = backup.metadata.namespace ?? '';
    return machines
      .list({ namespace })
      .filter((m) => m.spec.volumes?.some((v) => v.restoreFrom?.volumeBackup === backup.metadata.name))
      .map((m) => ({ namespace, name: m.metadata.name ?? '' }));
  };
  manager
    .controller(CONTROLLER_NAME)
    .for(MACHINE, specOrDeletionChanged)
    // The VolumeBackup controller sets a condition of its own in this status: each owns its fields.
    .status({ strategy: 'apply' })
    .owns(CoreTypes.PersistentVolumeClaim)
    .owns(CoreTypes.Pod)
    .owns(CoreTypes.Job)
    .watches<VolumeBackup>(VOLUME_BACKUP, restoringFrom)
    .complete(
      new MachineReconciler({
        client: manager.client,
        machines,
        pods: manager.cache.informerFor<V1Pod>(CoreTypes.Pod),
        claims: manager.cache.informerFor<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim),
        jobs: manager.cache.informerFor<V1Job>(CoreTypes.Job),
        backups,
        events: manager.eventsFor(CONTROLLER_NAME, MACHINE),
        copyImage: options.backupJobImage,
        restoreDeadlineSeconds: Math.ceil(options.volumeCopyDeadlineMs / 1000),
      }),
    );
}
