import { VOLUME_BACKUP } from '../../apis/index.ts';
import { CoreTypes } from '../../runtime/client/resource.ts';
import { type ControllerDeclaration, EVENTS_RULE } from '../declaration.ts';
import { CLAIM_READS, JOB_READS, POD_READS } from './cached.ts';
import { CONTROLLER_NAME, registerVolumeBackupController } from './index.ts';

/** Each VolumeBackup carried out: backup claims and copy Jobs. */
export const volumeBackupDeclaration: ControllerDeclaration = {
  name: CONTROLLER_NAME,
  reconciles: VOLUME_BACKUP,
  owns: [CoreTypes.PersistentVolumeClaim, CoreTypes.Job],
  rules: [
    // Read from the cache: it writes their status, never their spec or metadata.
    { apiGroups: ['infra.basicoperator.dev'], resources: ['volumebackups'], verbs: ['list', 'watch'] },
    {
      apiGroups: ['infra.basicoperator.dev'],
      resources: ['volumebackups/status'],
      verbs: ['patch'],
    },
    // Owner references with blockOwnerDeletion need update on the owner's finalizers.
    { apiGroups: ['infra.basicoperator.dev'], resources: ['volumebackups/finalizers'], verbs: ['update'] },
    // A Machine being let go without a backup: read only.
    { apiGroups: ['infra.basicoperator.dev'], resources: ['machines'], verbs: ['get', 'list', 'watch'] },
    // Its copy Jobs' pods are read, and deleted once their copy is recorded.
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'] },
    // The backup claims: created, owned, finalized (patch); the garbage collector deletes them.
    {
      apiGroups: [''],
      resources: ['persistentvolumeclaims'],
      verbs: ['get', 'list', 'watch', 'create', 'patch'],
    },
    {
      apiGroups: ['batch'],
      resources: ['jobs'],
      verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'],
    },
    EVENTS_RULE,
    // The Job controller's FailedCreate Events, read for a better message when a copy never starts.
    { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['list'] },
  ],
  reads: { pods: POD_READS, claims: CLAIM_READS, jobs: JOB_READS },
  register: (manager, options) => registerVolumeBackupController(manager, options),
};
