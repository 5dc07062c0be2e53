import { BASIC_REPLICA_SET } from '../../apis/index.ts';
import { CoreTypes } from '../../runtime/client/resource.ts';
import { type ControllerDeclaration, EVENTS_RULE } from '../declaration.ts';
import { POD_READS } from './cached.ts';
import { CONTROLLER_NAME, registerBasicReplicaSetController } from './index.ts';

export const basicReplicaSetDeclaration: ControllerDeclaration = {
  name: CONTROLLER_NAME,
  reconciles: BASIC_REPLICA_SET,
  owns: [CoreTypes.Pod],
  rules: [
    {
      apiGroups: ['apps.basicoperator.dev'],
      resources: ['basicreplicasets'],
      verbs: ['get', 'list', 'watch'],
    },
    {
      apiGroups: ['apps.basicoperator.dev'],
      resources: ['basicreplicasets/status'],
      verbs: ['patch'],
    },
    // Owner references with blockOwnerDeletion need update on the owner's finalizers.
    { apiGroups: ['apps.basicoperator.dev'], resources: ['basicreplicasets/finalizers'], verbs: ['update'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'] },
    EVENTS_RULE,
  ],
  reads: { pods: POD_READS },
  register: (manager) => registerBasicReplicaSetController(manager),
};
