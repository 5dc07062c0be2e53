import { POD_MACHINE } from '../../apis/index.ts';
import { CoreTypes } from '../../runtime/client/resource.ts';
import { type ControllerDeclaration, EVENTS_RULE } from '../declaration.ts';
import { CLAIM_READS, JOB_READS, OWN_POD_READS, POD_READS } from './cached.ts';
import { CONTROLLER_NAME, registerPodMachineController } from './index.ts';
import { POD_MACHINE_LABEL } from './names.ts';

export const podMachineDeclaration: ControllerDeclaration = {
  name: CONTROLLER_NAME,
  reconciles: POD_MACHINE,
  owns: [CoreTypes.PersistentVolumeClaim, CoreTypes.Pod, CoreTypes.Job],
  rules: [
    // The Machine controller creates, stops and deletes PodMachines; this one writes their status only.
    { apiGroups: ['infra.basicoperator.dev'], resources: ['podmachines'], verbs: ['get', 'list', 'watch'] },
    {
      apiGroups: ['infra.basicoperator.dev'],
      resources: ['podmachines/status'],
      verbs: ['patch'],
    },
    // Owner references with blockOwnerDeletion need update on the owner's finalizers.
    { apiGroups: ['infra.basicoperator.dev'], resources: ['podmachines/finalizers'], verbs: ['update'] },
    // The VolumeBackups its volumes restore from: read from the cache only.
    { apiGroups: ['infra.basicoperator.dev'], resources: ['volumebackups'], verbs: ['list', 'watch'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'] },
    // Its claims are kept when it stops; the garbage collector deletes them with it.
    {
      apiGroups: [''],
      resources: ['persistentvolumeclaims'],
      verbs: ['get', 'list', 'watch', 'create', 'patch'],
    },
    // Restore Jobs.
    {
      apiGroups: ['batch'],
      resources: ['jobs'],
      verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'],
    },
    EVENTS_RULE,
  ],
  reads: {
    pods: POD_READS,
    labelledPods: { label: POD_MACHINE_LABEL, shape: OWN_POD_READS },
    claims: CLAIM_READS,
    jobs: JOB_READS,
  },
  // The restore Jobs are the PodMachine's: it gets their image and deadline.
  register: (manager, options) =>
    registerPodMachineController(manager, {
      backupJobImage: options.backupJobImage,
      volumeCopyDeadlineMs: options.volumeCopyDeadlineMs,
    }),
};
