import { MACHINE, VOLUME_BACKUP } from '../../apis/index.ts';
import { CoreTypes } from '../../runtime/client/resource.ts';
import { type ControllerDeclaration, EVENTS_RULE } from '../declaration.ts';
import {
  MACHINE_BACKUP_CONTROLLER,
  registerMachineBackupController,
  registerVolumeBackupJobsController,
  VOLUME_BACKUP_CONTROLLER,
} from './index.ts';

/** The Machines' backup finalizer, and the VolumeBackup it records when one is deleted. */
export const machineBackupDeclaration: ControllerDeclaration = {
  name: MACHINE_BACKUP_CONTROLLER,
  reconciles: MACHINE,
  // The VolumeBackup outlives its Machine: no owner reference.
  owns: [],
  rules: [
    // The finalizer (patch).
    {
      apiGroups: ['infra.basicoperator.dev'],
      resources: ['machines'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    },
    // Its own condition, applied beside the Machine controller's.
    {
      apiGroups: ['infra.basicoperator.dev'],
      resources: ['machines/status'],
      verbs: ['get', 'update', 'patch'],
    },
    {
      apiGroups: ['infra.basicoperator.dev'],
      resources: ['volumebackups'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    },
    EVENTS_RULE,
  ],
  register: (manager) => registerMachineBackupController(manager),
};

/** Each VolumeBackup carried out: backup claims and copy Jobs. */
export const volumeBackupDeclaration: ControllerDeclaration = {
  name: VOLUME_BACKUP_CONTROLLER,
  reconciles: VOLUME_BACKUP,
  owns: [CoreTypes.PersistentVolumeClaim, CoreTypes.Job],
  rules: [
    {
      apiGroups: ['infra.basicoperator.dev'],
      resources: ['volumebackups'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    },
    {
      apiGroups: ['infra.basicoperator.dev'],
      resources: ['volumebackups/status'],
      verbs: ['get', 'update', 'patch'],
    },
    // Owner references with blockOwnerDeletion need update on the owner's finalizers.
    { apiGroups: ['infra.basicoperator.dev'], resources: ['volumebackups/finalizers'], verbs: ['update'] },
    // A Machine being let go without a backup: read only.
    { apiGroups: ['infra.basicoperator.dev'], resources: ['machines'], verbs: ['get', 'list', 'watch'] },
    // Its copy Jobs' pods are read, and deleted once their copy is recorded; the claims are the backups'.
    {
      apiGroups: [''],
      resources: ['pods', 'persistentvolumeclaims'],
      verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'],
    },
    {
      apiGroups: ['batch'],
      resources: ['jobs'],
      verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'],
    },
    EVENTS_RULE,
  ],
  register: (manager, options) => registerVolumeBackupJobsController(manager, options),
};
