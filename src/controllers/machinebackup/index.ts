import { MACHINE, VOLUME_BACKUP, type VolumeBackup } from '../../apis/index.ts';
import type { Manager } from '../../runtime/manager/manager.ts';
import { MachineBackupReconciler } from './reconciler.ts';

/**
 * A second controller on Machines: the backup finalizer, and the VolumeBackup recorded between a
 * Machine's deletion and its release. The volumebackup controller carries that VolumeBackup out; the
 * two talk only through the VolumeBackup's spec and status.
 */
export const CONTROLLER_NAME = 'machine-backup';

export function registerMachineBackupController(manager: Manager): void {
  const backups = manager.cache.informerFor<VolumeBackup>(VOLUME_BACKUP);
  manager
    .controller(CONTROLLER_NAME)
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
        events: manager.eventsFor(CONTROLLER_NAME, MACHINE),
      }),
    );
}
