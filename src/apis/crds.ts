// The five CustomResourceDefinitions, built from the schemas in this folder. scripts/generate-crds.ts
// writes them to config/crd and the Helm chart; nothing else should define them.
import { BASIC_DEPLOYMENT } from './apps/v1alpha1/basicdeployment.ts';
import { basicDeploymentSchema } from './apps/v1alpha1/basicdeployment-schema.ts';
import { BASIC_REPLICA_SET } from './apps/v1alpha1/basicreplicaset.ts';
import { basicReplicaSetSchema } from './apps/v1alpha1/basicreplicaset-schema.ts';
import type { CustomResourceDefinition, PrinterColumn, ScaleSubresource } from './crd-types.ts';
import { CONTRACT_LABEL } from './infra/contract/v1.ts';
import { MACHINE } from './infra/v1alpha1/machine.ts';
import { machineSchema } from './infra/v1alpha1/machine-schema.ts';
import { POD_MACHINE } from './infra/v1alpha1/podmachine.ts';
import { podMachineSchema } from './infra/v1alpha1/podmachine-schema.ts';
import { VOLUME_BACKUP } from './infra/v1alpha1/volumebackup.ts';
import { volumeBackupSchema } from './infra/v1alpha1/volumebackup-schema.ts';
import type { JsonSchemaProps } from './json-schema.ts';
import { type ApiResource, MANAGED_BY_LABEL, MANAGED_BY_VALUE } from './meta.ts';

/** `kubectl get basic` lists every kind of this operator. */
export const CRD_CATEGORY = 'basic';

const WORKLOAD_SCALE: ScaleSubresource = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  labelSelectorPath: '.status.selector',
};

const AGE_COLUMN: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

const column = (
  name: string,
  type: PrinterColumn['type'],
  jsonPath: string,
  description: string,
): PrinterColumn => ({
  name,
  type,
  jsonPath,
  description,
});

function customResourceDefinition(options: {
  resource: ApiResource;
  schema: JsonSchemaProps;
  columns: readonly PrinterColumn[];
  scale?: ScaleSubresource;
  labels?: Record<string, string>;
}): CustomResourceDefinition {
  const { resource, schema, columns, scale } = options;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${resource.plural}.${resource.group}`,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, ...options.labels },
    },
    spec: {
      group: resource.group,
      names: {
        kind: resource.kind,
        listKind: resource.listKind,
        plural: resource.plural,
        singular: resource.singular,
        ...(resource.shortNames.length > 0 ? { shortNames: resource.shortNames } : {}),
        categories: [CRD_CATEGORY],
      },
      scope: resource.namespaced ? 'Namespaced' : 'Cluster',
      versions: [
        {
          name: resource.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: schema },
          subresources: scale ? { status: {}, scale } : { status: {} },
          additionalPrinterColumns: [...columns, AGE_COLUMN],
        },
      ],
    },
  };
}

export const basicDeploymentCrd = customResourceDefinition({
  resource: BASIC_DEPLOYMENT,
  schema: basicDeploymentSchema,
  scale: WORKLOAD_SCALE,
  columns: [
    column('Desired', 'integer', '.spec.replicas', 'Desired pods'),
    column('Current', 'integer', '.status.replicas', 'Pods that exist'),
    column('Ready', 'integer', '.status.readyReplicas', 'Ready pods'),
    column('Up-To-Date', 'integer', '.status.updatedReplicas', 'Pods of the current template'),
    column('Available', 'integer', '.status.availableReplicas', 'Pods ready for at least minReadySeconds'),
  ],
});

export const basicReplicaSetCrd = customResourceDefinition({
  resource: BASIC_REPLICA_SET,
  schema: basicReplicaSetSchema,
  scale: WORKLOAD_SCALE,
  columns: [
    column('Desired', 'integer', '.spec.replicas', 'Desired pods'),
    column('Current', 'integer', '.status.replicas', 'Pods that exist'),
    column('Ready', 'integer', '.status.readyReplicas', 'Ready pods'),
    column('Available', 'integer', '.status.availableReplicas', 'Pods ready for at least minReadySeconds'),
  ],
});

export const machineCrd = customResourceDefinition({
  resource: MACHINE,
  schema: machineSchema,
  columns: [
    column('Phase', 'string', '.status.phase', 'Lifecycle phase'),
    column('Provider', 'string', '.status.infrastructureRef.kind', 'Kind of the provider object'),
    column(
      'Infrastructure',
      'string',
      '.status.conditions[?(@.type=="InfrastructureReady")].status',
      'Whether the provider object reports ready',
    ),
    column('Ready', 'boolean', '.status.ready', 'The provider is ready and nothing else holds the Machine'),
  ],
});

/** The first provider of the Machine infrastructure contract: it declares contract v1 on its CRD. */
export const podMachineCrd = customResourceDefinition({
  resource: POD_MACHINE,
  schema: podMachineSchema,
  labels: { [CONTRACT_LABEL]: POD_MACHINE.version },
  columns: [
    column('Phase', 'string', '.status.phase', 'Lifecycle phase'),
    column('Ready', 'boolean', '.status.ready', 'The pod runs and every volume is bound'),
  ],
});

export const volumeBackupCrd = customResourceDefinition({
  resource: VOLUME_BACKUP,
  schema: volumeBackupSchema,
  columns: [
    column('Machine', 'string', '.spec.machineName', 'The Machine whose volumes are backed up'),
    column('Phase', 'string', '.status.phase', 'Lifecycle phase'),
    column('Attempts', 'integer', '.status.attempts', 'Copy Jobs started so far'),
  ],
});

export const CUSTOM_RESOURCE_DEFINITIONS: readonly CustomResourceDefinition[] = [
  basicDeploymentCrd,
  basicReplicaSetCrd,
  machineCrd,
  podMachineCrd,
  volumeBackupCrd,
];
