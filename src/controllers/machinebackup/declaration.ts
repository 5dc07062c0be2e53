import { MACHINE } from '../../apis/index.ts';
import { type ControllerDeclaration, EVENTS_RULE } from '../declaration.ts';
import { CONTROLLER_NAME, registerMachineBackupController } from './index.ts';

/** The Machines' backup finalizer, and the VolumeBackup it records when one is deleted. */
export const machineBackupDeclaration: ControllerDeclaration = {
  name: CONTROLLER_NAME,
  reconciles: MACHINE,
  // The VolumeBackup outlives its Machine: no owner reference.
  owns: [],
  rules: [
    // The finalizer (patch).
    {
      apiGroups: ['infra.basicoperator.dev'],
      resources: ['machines'],
      verbs: ['get', 'list', 'watch', 'patch'],
    },
    // Its own condition, applied beside the Machine controller's.
    {
      apiGroups: ['infra.basicoperator.dev'],
      resources: ['machines/status'],
      verbs: ['patch'],
    },
    // It records a VolumeBackup; the volumebackup controller carries it out, users delete it.
    {
      apiGroups: ['infra.basicoperator.dev'],
      resources: ['volumebackups'],
      verbs: ['list', 'watch', 'create'],
    },
    EVENTS_RULE,
  ],
  register: (manager) => registerMachineBackupController(manager),
};
