import type { Manager } from '../runtime/manager/manager.ts';
import { registerBasicDeploymentController } from './basicdeployment/index.ts';
import { registerBasicReplicaSetController } from './basicreplicaset/index.ts';
import { registerMachineController } from './machine/index.ts';
import { registerVolumeBackupController } from './volumebackup/index.ts';

/** Registers every controller of the operator with the manager. */
export function registerControllers(manager: Manager): void {
  registerBasicDeploymentController(manager);
  registerBasicReplicaSetController(manager);
  registerMachineController(manager);
  registerVolumeBackupController(manager);
}
