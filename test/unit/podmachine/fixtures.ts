import type { V1OwnerReference } from '@kubernetes/client-node';
import {
  CREATED_FOR_ANNOTATION,
  POD_MACHINE,
  type PodMachine,
  type PodMachineSpec,
} from '../../../src/apis/index.ts';

/**
 * The Machine that controls the PodMachines below (when asked to): an inline Machine's shape, which
 * created them.
 */
export const OWNER: V1OwnerReference = {
  apiVersion: 'infra.basicoperator.dev/v1alpha1',
  kind: 'Machine',
  name: 'web',
  uid: 'a1b2c3d4-0000-4000-8000-00000000000a',
  controller: true,
  blockOwnerDeletion: true,
};

export function podMachine(
  spec: Partial<PodMachineSpec> = {},
  options: { name?: string; owner?: V1OwnerReference; annotations?: Record<string, string> } = {},
): PodMachine {
  return {
    apiVersion: POD_MACHINE.apiVersion,
    kind: POD_MACHINE.kind,
    metadata: {
      name: options.name ?? 'web',
      namespace: 'ns',
      uid: '0b7c9a52-1111-2222-3333-444455556666',
      generation: 1,
      ...(options.owner ? { ownerReferences: [options.owner] } : {}),
      // Made by its owner, as the Machine controller makes a PodMachine (it says so).
      ...(options.owner || options.annotations
        ? {
            annotations: {
              ...(options.owner ? { [CREATED_FOR_ANNOTATION]: options.owner.uid } : {}),
              ...options.annotations,
            },
          }
        : {}),
    },
    spec: {
      image: 'app:1',
      volumes: [
        { name: 'data', size: '1Gi', mountPath: '/data' },
        { name: 'logs', size: 1048576, mountPath: '/logs', storageClassName: 'fast' },
      ],
      ...spec,
    },
  };
}
