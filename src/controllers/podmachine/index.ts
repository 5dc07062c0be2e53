import {
  POD_MACHINE,
  type PodMachine,
  stopRequested,
  VOLUME_BACKUP,
  type VolumeBackup,
} from '../../apis/index.ts';
import { controllerRefOf } from '../../runtime/client/object.ts';
import { CoreTypes } from '../../runtime/client/resource.ts';
import type { Predicate } from '../../runtime/controller/predicates.ts';
import type { Request } from '../../runtime/controller/reconciler.ts';
import type { Manager } from '../../runtime/manager/manager.ts';
import type { CachedClaim, CachedJob, CachedPod } from './cached.ts';
import { PodMachineReconciler } from './reconciler.ts';

export const CONTROLLER_NAME = 'podmachine';

/**
 * PodMachine updates worth a reconcile: a spec change (generation; the spec is immutable, so only
 * at creation), the start of deletion, the stop request coming, or a new controller owner (whose
 * children from before PodMachines are taken over, see reparent.ts). Its own status writes are not.
 */
const podMachineChanged: Predicate = {
  update: (oldObj, newObj) =>
    oldObj.metadata?.generation !== newObj.metadata?.generation ||
    (oldObj.metadata?.deletionTimestamp == null) !== (newObj.metadata?.deletionTimestamp == null) ||
    stopRequested(oldObj) !== stopRequested(newObj) ||
    controllerRefOf(oldObj)?.uid !== controllerRefOf(newObj)?.uid,
};

export interface PodMachineOptions {
  /** Image of the restore Jobs (--backup-job-image). */
  backupJobImage: string;
  /** How long a restore Job may run (--volume-copy-deadline). */
  volumeCopyDeadlineMs: number;
}

/**
 * PodMachine, the first provider of the Machine infrastructure contract: one PersistentVolumeClaim
 * per volume plus one Pod, all controlled by the PodMachine. Reconciles on its own changes (see
 * podMachineChanged), on changes to its claims, pod and restore Jobs, and on changes to a
 * VolumeBackup one of its volumes restores from.
 */
export function registerPodMachineController(manager: Manager, options: PodMachineOptions): void {
  const podMachines = manager.cache.informerFor<PodMachine>(POD_MACHINE);
  const restoringFrom = (backup: VolumeBackup): Request[] => {
    const namespace = backup.metadata.namespace ?? '';
    return podMachines
      .list({ namespace })
      .filter((pm) => pm.spec.volumes?.some((v) => v.restoreFrom?.volumeBackup === backup.metadata.name))
      .map((pm) => ({ namespace, name: pm.metadata.name ?? '' }));
  };
  manager
    .controller(CONTROLLER_NAME)
    .for(POD_MACHINE, podMachineChanged)
    .status()
    .owns(CoreTypes.PersistentVolumeClaim)
    .owns(CoreTypes.Pod)
    .owns(CoreTypes.Job)
    .watches<VolumeBackup>(VOLUME_BACKUP, restoringFrom)
    .complete(
      new PodMachineReconciler({
        client: manager.client,
        pods: manager.cache.informerFor<CachedPod>(CoreTypes.Pod),
        claims: manager.cache.informerFor<CachedClaim>(CoreTypes.PersistentVolumeClaim),
        jobs: manager.cache.informerFor<CachedJob>(CoreTypes.Job),
        backups: manager.cache.informerFor<VolumeBackup>(VOLUME_BACKUP),
        events: manager.eventsFor(CONTROLLER_NAME, POD_MACHINE),
        backupJobImage: options.backupJobImage,
        restoreDeadlineSeconds: Math.ceil(options.volumeCopyDeadlineMs / 1000),
      }),
    );
}
