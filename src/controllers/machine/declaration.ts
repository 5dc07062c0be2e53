import { MACHINE, POD_MACHINE } from '../../apis/index.ts';
import { type ControllerDeclaration, EVENTS_RULE } from '../declaration.ts';
import { CONTROLLER_NAME, registerMachineController } from './index.ts';

/**
 * The provider objects of other kinds it creates and deletes are granted by the providers' own
 * roles, aggregated into the operator's (docs/contracts.md).
 */
export const machineDeclaration: ControllerDeclaration = {
  name: CONTROLLER_NAME,
  reconciles: MACHINE,
  owns: [POD_MACHINE],
  rules: [
    // Its finalizer is added and removed by patch; users create and delete Machines.
    {
      apiGroups: ['infra.basicoperator.dev'],
      resources: ['machines'],
      verbs: ['get', 'list', 'watch', 'patch'],
    },
    {
      apiGroups: ['infra.basicoperator.dev'],
      resources: ['machines/status'],
      verbs: ['patch'],
    },
    // Owner references with blockOwnerDeletion need update on the owner's finalizers.
    { apiGroups: ['infra.basicoperator.dev'], resources: ['machines/finalizers'], verbs: ['update'] },
    // It creates, owns (patch), asks to stop (patch) and deletes PodMachines; never writes their spec.
    {
      apiGroups: ['infra.basicoperator.dev'],
      resources: ['podmachines'],
      verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'],
    },
    // Which kinds declare the infrastructure contract: read from the cache (metadata only), never one by one.
    {
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      verbs: ['list', 'watch'],
    },
    EVENTS_RULE,
  ],
  register: (manager) => registerMachineController(manager),
};
