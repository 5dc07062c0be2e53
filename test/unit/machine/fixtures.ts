import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import {
  ADOPTABLE_BY_ANNOTATION,
  CONTRACT_LABEL,
  type InfrastructureReference,
  type Machine,
  type MachineSpec,
  podMachineCrd,
} from '../../../src/apis/index.ts';
import type { Unstructured } from '../../../src/runtime/client/object.ts';
import { type ResourceType, resourceOf } from '../../../src/runtime/client/resource.ts';

export const MACHINE_UID = '0b7c9a52-1111-2222-3333-444455556666';

/** An inline Machine (image and two volumes), or whatever `spec` makes it. */
export function machine(spec: Partial<MachineSpec> = {}, name = 'web'): Machine {
  return {
    apiVersion: 'infra.basicoperator.dev/v1alpha1',
    kind: 'Machine',
    metadata: { name, namespace: 'ns', uid: MACHINE_UID, generation: 3 },
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

/** A third party's provider kind, known to the Machine controller only at run time. */
export const CLOUD_MACHINE = resourceOf<Unstructured>()({
  group: 'cloud.example.dev',
  version: 'v1',
  kind: 'CloudMachine',
  plural: 'cloudmachines',
  namespaced: true,
});

export const cloudRef = (
  name = 'vm-1',
  extra: Partial<InfrastructureReference> = {},
): InfrastructureReference => ({
  apiVersion: 'cloud.example.dev/v1',
  kind: 'CloudMachine',
  name,
  ...extra,
});

/** A Machine that references a provider object (no inline fields). */
export function referencing(
  ref: InfrastructureReference,
  name = 'web',
  backup: MachineSpec['backup'] = { policy: 'None' },
): Machine {
  return { ...machine({}, name), spec: { infrastructureRef: ref, backup } };
}

/** The CRD of a kind, with the contract label `contract` (none when undefined). */
export function crdOf(type: ResourceType, contract: string | undefined): V1CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${type.plural}.${type.group}`,
      ...(contract !== undefined ? { labels: { [CONTRACT_LABEL]: contract } } : {}),
    },
    spec: {
      group: type.group,
      scope: type.namespaced ? 'Namespaced' : 'Cluster',
      names: { kind: type.kind, plural: type.plural },
      versions: [{ name: type.version, served: true, storage: true }],
    },
  };
}

/** The PodMachine CRD as the project installs it (labelled with the contract). */
export const POD_MACHINE_CRD: V1CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: podMachineCrd.metadata.name, labels: { ...podMachineCrd.metadata.labels } },
  spec: {
    group: podMachineCrd.spec.group,
    scope: 'Namespaced',
    names: { kind: 'PodMachine', plural: 'podmachines' },
    versions: [],
  },
};

/** The metadata that lets Machine `machine` adopt a provider object. */
export function adoptableBy(machine: string): { annotations: Record<string, string> } {
  return { annotations: { [ADOPTABLE_BY_ANNOTATION]: machine } };
}

/** A provider object in the Machine's namespace, with this status. */
export function cloudMachine(
  name: string,
  status?: Record<string, unknown>,
  metadata: Unstructured['metadata'] = {},
): Unstructured {
  return {
    apiVersion: 'cloud.example.dev/v1',
    kind: 'CloudMachine',
    metadata: { name, namespace: 'ns', ...metadata },
    spec: { size: 'small' },
    ...(status ? { status } : {}),
  };
}
