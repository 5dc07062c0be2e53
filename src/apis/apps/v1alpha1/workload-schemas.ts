// Schema pieces the two workload kinds share: selector, pod template, replica counts. Every string,
// list and map a user writes is bounded (docs/api.md#bounds gives each bound and its reason): CEL
// iterates over selectors, labels and annotations, and the apiserver rejects a CRD whose rules
// could exceed its cost budget; the rest keeps one object from growing the pods and sets made from it.
import { argumentsSchema, dnsLabelSchema, imageSchema, int32Schema } from '../../common-schemas.ts';
import type { JsonSchemaProps } from '../../json-schema.ts';
import { RULES, TOTAL_ANNOTATION_BYTES } from '../../rules.ts';

/** Labels of a BasicDeployment's template and selector. */
export const MAX_DEPLOYMENT_LABELS = 64;
/** A BasicReplicaSet's: one more, for the pod-template-hash its BasicDeployment adds to both. */
export const MAX_REPLICA_SET_LABELS = MAX_DEPLOYMENT_LABELS + 1;
const MAX_SELECTOR_REQUIREMENTS = 32;
const MAX_REQUIREMENT_VALUES = 64;
/** A label key or qualified name: an optional DNS subdomain prefix (253), a slash, a name (63). */
const MAX_KEY = 317;
const MAX_ANNOTATIONS = 256;
const MAX_CONTAINERS = 100;
const MAX_ENV = 256;
const MAX_ENV_FROM = 64;
const MAX_PORTS = 256;
const MAX_VOLUME_MOUNTS = 256;
const MAX_VOLUMES = 256;
const MAX_IMAGE_PULL_SECRETS = 64;
const MAX_TOLERATIONS = 128;
const MAX_NODE_SELECTOR = 64;
/** An environment value: room for a certificate, as a Machine's. */
const MAX_ENV_VALUE = 32768;
const MAX_NAME = 253;
/** A status.selector written from the largest selector the spec allows (about 166,000 characters). */
const MAX_STATUS_SELECTOR = 262144;

const str = (maxLength: number, extra: Partial<JsonSchemaProps> = {}): JsonSchemaProps => ({
  type: 'string',
  maxLength,
  ...extra,
});
const list = (items: JsonSchemaProps, maxItems: number, extra: Partial<JsonSchemaProps> = {}) =>
  ({ type: 'array', maxItems, items, ...extra }) satisfies JsonSchemaProps;
/** An object of core/v1 whose named fields are bounded; its other fields are kept as written. */
const open = (
  properties: Record<string, JsonSchemaProps>,
  required?: readonly string[],
): JsonSchemaProps => ({
  type: 'object',
  ...(required ? { required } : {}),
  properties,
  'x-kubernetes-preserve-unknown-fields': true,
});

const labelValueSchema: JsonSchemaProps = {
  type: 'string',
  maxLength: 63,
  pattern: '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$',
};

const labelsSchema = (maxLabels: number): JsonSchemaProps => ({
  type: 'object',
  maxProperties: maxLabels,
  additionalProperties: labelValueSchema,
});

/** Template labels become the pods' labels; the operator's marker key is reserved. */
const templateLabelsSchema = (maxLabels: number): JsonSchemaProps => ({
  ...labelsSchema(maxLabels),
  'x-kubernetes-validations': [RULES.templateLabelNotReserved],
});

/** Copied into every pod, so held to core/v1's total, which the pods would otherwise fail on. */
const annotationsSchema: JsonSchemaProps = {
  type: 'object',
  maxProperties: MAX_ANNOTATIONS,
  additionalProperties: { type: 'string', maxLength: TOTAL_ANNOTATION_BYTES },
  'x-kubernetes-validations': [RULES.templateAnnotationsSize],
};

const labelSelectorRequirementSchema: JsonSchemaProps = {
  type: 'object',
  required: ['key', 'operator'],
  properties: {
    key: { type: 'string', minLength: 1, maxLength: MAX_KEY },
    operator: { type: 'string', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] },
    values: { type: 'array', maxItems: MAX_REQUIREMENT_VALUES, items: labelValueSchema },
  },
  'x-kubernetes-validations': [RULES.selectorRequirementValues],
};

/** The selector of a workload whose labels may number `maxLabels`. */
export const labelSelectorSchema = (maxLabels: number): JsonSchemaProps => ({
  type: 'object',
  description: 'Selects the pods this object owns. Must match template.metadata.labels. Immutable.',
  properties: {
    matchLabels: labelsSchema(maxLabels),
    matchExpressions: {
      type: 'array',
      maxItems: MAX_SELECTOR_REQUIREMENTS,
      items: labelSelectorRequirementSchema,
      'x-kubernetes-list-type': 'atomic',
    },
  },
  'x-kubernetes-map-type': 'atomic',
  'x-kubernetes-validations': [RULES.selectorNotEmpty, RULES.selectorKeyNotReserved, RULES.selectorImmutable],
});

const envVarSchema = open({ name: str(MAX_NAME, { minLength: 1 }), value: str(MAX_ENV_VALUE) }, ['name']);

const containerSchema: JsonSchemaProps = open(
  {
    name: dnsLabelSchema,
    image: imageSchema,
    command: argumentsSchema,
    args: argumentsSchema,
    workingDir: str(4096),
    env: list(envVarSchema, MAX_ENV),
    envFrom: list(open({ prefix: str(MAX_NAME) }), MAX_ENV_FROM),
    ports: list(open({ name: str(15) }), MAX_PORTS),
    volumeMounts: list(
      open({ name: str(MAX_NAME), mountPath: str(4096), subPath: str(4096), subPathExpr: str(4096) }),
      MAX_VOLUME_MOUNTS,
    ),
  },
  ['name', 'image'],
);

const podSpecSchema: JsonSchemaProps = open(
  {
    containers: list(containerSchema, MAX_CONTAINERS, { minItems: 1 }),
    initContainers: list(containerSchema, MAX_CONTAINERS),
    volumes: list(open({ name: dnsLabelSchema }, ['name']), MAX_VOLUMES),
    imagePullSecrets: list(open({ name: str(MAX_NAME) }), MAX_IMAGE_PULL_SECRETS),
    tolerations: list(open({ key: str(MAX_KEY), value: str(63) }), MAX_TOLERATIONS),
    nodeSelector: {
      type: 'object',
      maxProperties: MAX_NODE_SELECTOR,
      additionalProperties: str(63),
    },
    serviceAccountName: str(MAX_NAME),
  },
  ['containers'],
);

/** The pod template of a workload whose labels may number `maxLabels`. */
export const podTemplateSchema = (maxLabels: number): JsonSchemaProps => ({
  type: 'object',
  description:
    'The pods to run. The pod spec is passed to the apiserver as written and validated there; its lists and strings are bounded here.',
  required: ['spec'],
  properties: {
    metadata: {
      type: 'object',
      properties: {
        labels: templateLabelsSchema(maxLabels),
        annotations: annotationsSchema,
      },
    },
    spec: podSpecSchema,
  },
});

export const replicasSpecSchema: JsonSchemaProps = {
  ...int32Schema(0),
  default: 1,
  description: 'Desired number of pods. Default 1.',
};

export const minReadySecondsSchema: JsonSchemaProps = {
  ...int32Schema(0),
  default: 0,
  description: 'Seconds a ready pod must stay ready before it counts as available. Default 0.',
};

/** A pod count in status. */
export const replicaCountSchema: JsonSchemaProps = int32Schema(0);

export const statusSelectorSchema: JsonSchemaProps = {
  type: 'string',
  maxLength: MAX_STATUS_SELECTOR,
  description: 'spec.selector in label-query form, read by the scale subresource.',
};
