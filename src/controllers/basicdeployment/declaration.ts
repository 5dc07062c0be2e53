import { BASIC_DEPLOYMENT, BASIC_REPLICA_SET } from '../../apis/index.ts';
import { type ControllerDeclaration, EVENTS_RULE } from '../declaration.ts';
import { CONTROLLER_NAME, registerBasicDeploymentController } from './index.ts';

export const basicDeploymentDeclaration: ControllerDeclaration = {
  name: CONTROLLER_NAME,
  reconciles: BASIC_DEPLOYMENT,
  owns: [BASIC_REPLICA_SET],
  rules: [
    // Its own kind is read, and patched with the revision it rolled out; users create and delete it.
    {
      apiGroups: ['apps.basicoperator.dev'],
      resources: ['basicdeployments'],
      verbs: ['get', 'list', 'watch', 'patch'],
    },
    // Its sets: created, adopted and released (patch), scaled (update, guarded by resourceVersion), deleted.
    {
      apiGroups: ['apps.basicoperator.dev'],
      resources: ['basicreplicasets'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    },
    {
      apiGroups: ['apps.basicoperator.dev'],
      resources: ['basicdeployments/status'],
      verbs: ['patch'],
    },
    // Owner references with blockOwnerDeletion need update on the owner's finalizers.
    { apiGroups: ['apps.basicoperator.dev'], resources: ['basicdeployments/finalizers'], verbs: ['update'] },
    EVENTS_RULE,
  ],
  register: (manager) => registerBasicDeploymentController(manager),
};
