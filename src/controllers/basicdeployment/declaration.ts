import { BASIC_DEPLOYMENT, BASIC_REPLICA_SET } from '../../apis/index.ts';
import { type ControllerDeclaration, EVENTS_RULE } from '../declaration.ts';
import { CONTROLLER_NAME, registerBasicDeploymentController } from './index.ts';

export const basicDeploymentDeclaration: ControllerDeclaration = {
  name: CONTROLLER_NAME,
  reconciles: BASIC_DEPLOYMENT,
  owns: [BASIC_REPLICA_SET],
  rules: [
    {
      apiGroups: ['apps.basicoperator.dev'],
      resources: ['basicdeployments', 'basicreplicasets'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    },
    {
      apiGroups: ['apps.basicoperator.dev'],
      resources: ['basicdeployments/status'],
      verbs: ['get', 'update', 'patch'],
    },
    // Owner references with blockOwnerDeletion need update on the owner's finalizers.
    { apiGroups: ['apps.basicoperator.dev'], resources: ['basicdeployments/finalizers'], verbs: ['update'] },
    EVENTS_RULE,
  ],
  register: (manager) => registerBasicDeploymentController(manager),
};
