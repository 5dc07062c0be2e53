// The openAPIV3Schema of Machine.
import {
  argumentsSchema,
  conditionsSchema,
  dnsLabelSchema,
  imageSchema,
  objectNameSchema,
  observedGenerationSchema,
  rootSchema,
} from '../../common-schemas.ts';
import type { JsonSchemaProps } from '../../json-schema.ts';
import { RULES } from '../../rules.ts';
import { MAX_COPY_AS_ID } from '../contract/v1.ts';
import { MACHINE_PHASES } from './machine.ts';
import { podFieldsSchema } from './pod-fields-schema.ts';

// Bounds that keep the per-volume CEL rules inside the apiserver's cost budget.
export const MAX_VOLUMES = 16;
const MAX_PATH_LENGTH = 1024;

/** A non-negative resource.Quantity in string form: "1Gi", "500M", "1e9". */
export const QUANTITY_PATTERN =
  '^(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

export const machineVolumeSchema: JsonSchemaProps = {
  type: 'object',
  required: ['name', 'size', 'mountPath'],
  properties: {
    name: { ...dnsLabelSchema, description: 'DNS-1123 label, unique within the Machine.' },
    size: {
      anyOf: [{ type: 'integer' }, { type: 'string' }],
      'x-kubernetes-int-or-string': true,
      description: 'Capacity of the claim: a quantity such as "1Gi", or a number of bytes.',
      minimum: 1,
      maxLength: 64,
      pattern: QUANTITY_PATTERN,
      'x-kubernetes-validations': [RULES.machineVolumeSizePositive],
    },
    mountPath: {
      type: 'string',
      description: 'Absolute path in the container; unique within the Machine.',
      minLength: 1,
      maxLength: MAX_PATH_LENGTH,
      pattern: '^/',
    },
    storageClassName: { type: 'string', maxLength: 253 },
    restoreFrom: {
      type: 'object',
      description: 'Fill the new claim from a volume of a VolumeBackup in the same namespace.',
      required: ['volumeBackup', 'volume'],
      properties: {
        volumeBackup: objectNameSchema,
        volume: dnsLabelSchema,
      },
    },
  },
};

/** A reference to a provider object of the infrastructure contract (docs/contracts.md). */
export const infrastructureReferenceSchema: JsonSchemaProps = {
  type: 'object',
  required: ['apiVersion', 'kind', 'name'],
  properties: {
    apiVersion: {
      type: 'string',
      description: 'group/version of the provider kind.',
      maxLength: 317,
      pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[a-z0-9]+$',
    },
    kind: { type: 'string', minLength: 1, maxLength: 63, pattern: '^[A-Z][A-Za-z0-9]*$' },
    name: objectNameSchema,
    namespace: {
      type: 'string',
      description: "Must be the Machine's own namespace when set; a provider object never lives elsewhere.",
      maxLength: 63,
    },
  },
};

/** image, command and args of the Machine's (or PodMachine's) single container. */
export const containerFieldsSchema: Record<string, JsonSchemaProps> = {
  image: { ...imageSchema, description: 'Container image of the Machine pod.' },
  command: argumentsSchema,
  args: argumentsSchema,
};

export const volumesSchema: JsonSchemaProps = {
  type: 'array',
  description: 'One PersistentVolumeClaim each, mounted into the pod. Immutable after creation.',
  maxItems: MAX_VOLUMES,
  items: machineVolumeSchema,
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['name'],
  'x-kubernetes-validations': [RULES.machineMountPathsUnique],
};

const specSchema: JsonSchemaProps = {
  type: 'object',
  properties: {
    infrastructureRef: {
      ...infrastructureReferenceSchema,
      description:
        'The provider object that realizes this Machine (docs/contracts.md). Exclusive with image. Immutable.',
      'x-kubernetes-validations': [RULES.machineInfrastructureRefImmutable],
    },
    ...containerFieldsSchema,
    volumes: volumesSchema,
    ...podFieldsSchema,
    backup: {
      type: 'object',
      default: { policy: 'OnDelete' },
      properties: {
        policy: {
          type: 'string',
          enum: ['OnDelete', 'None'],
          default: 'OnDelete',
          description: 'OnDelete backs every volume up into a VolumeBackup before the Machine goes away.',
        },
      },
    },
  },
  'x-kubernetes-validations': [
    RULES.machineImageOrInfrastructureRef,
    RULES.machineInlineFieldsNeedImage,
    RULES.machineInlineImmutable,
    RULES.machinePodFieldsImmutable,
    RULES.machineVolumesImmutable,
  ],
};

export const addressesSchema: JsonSchemaProps = {
  type: 'array',
  maxItems: 32,
  items: {
    type: 'object',
    required: ['type', 'address'],
    properties: { type: { type: 'string', maxLength: 63 }, address: { type: 'string', maxLength: 253 } },
  },
};

export const volumeStatusesSchema: JsonSchemaProps = {
  type: 'array',
  maxItems: MAX_VOLUMES,
  items: {
    type: 'object',
    required: ['name', 'claimName'],
    properties: {
      name: { type: 'string', maxLength: 63 },
      claimName: { type: 'string', maxLength: 253 },
      phase: { type: 'string', maxLength: 64, description: "The claim's phase as last observed." },
    },
  },
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['name'],
};

const idSchema = (minimum: number, description: string): JsonSchemaProps => ({
  type: 'integer',
  format: 'int64',
  minimum,
  maximum: MAX_COPY_AS_ID,
  description,
});

/** The contract's status.copyAs (docs/contracts.md), on a provider object and on the Machine. */
export const copyAsStatusSchema: JsonSchemaProps = {
  type: 'object',
  description:
    "Whom the workload's pod runs as: a copy of its volumes that may not run as root (Pod Security restricted) runs as this user, group and fsGroup. Absent when the pod runs as root or the provider does not say (copies then run as 65532).",
  required: ['runAsUser', 'runAsGroup'],
  properties: {
    runAsUser: idSchema(1, "The pod's user; never root."),
    runAsGroup: idSchema(0, "The pod's group."),
    fsGroup: idSchema(0, "The pod's fsGroup, when it has one."),
  },
};

const statusSchema: JsonSchemaProps = {
  type: 'object',
  properties: {
    phase: { type: 'string', enum: MACHINE_PHASES },
    ready: { type: 'boolean' },
    infrastructureRef: {
      ...infrastructureReferenceSchema,
      description:
        'The provider object in use: spec.infrastructureRef, or the PodMachine made for an inline Machine.',
    },
    providerID: { type: 'string', maxLength: 512, description: 'Copied from the provider object.' },
    addresses: addressesSchema,
    volumes: volumeStatusesSchema,
    copyAs: {
      ...copyAsStatusSchema,
      description:
        "Copied from the provider object: whom its pod runs as. A backup's copies run as it where root is refused (VolumeBackup spec.copyAs); absent, they run as 65532.",
    },
    volumeBackup: {
      type: 'object',
      description:
        "The VolumeBackup the operator created for this Machine's deletion, by name and uid; only it can release the Machine.",
      required: ['name', 'uid'],
      properties: {
        name: { type: 'string', maxLength: 253 },
        uid: { type: 'string', maxLength: 128 },
      },
    },
    observedGeneration: observedGenerationSchema,
    conditions: conditionsSchema,
  },
};

export const machineSchema: JsonSchemaProps = rootSchema({
  description:
    'Machine: compute and volumes realized by a provider object of the infrastructure contract (spec.infrastructureRef), or inline as a PodMachine.',
  spec: specSchema,
  status: statusSchema,
});
