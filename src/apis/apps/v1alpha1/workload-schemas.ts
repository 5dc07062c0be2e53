// Schema pieces the two workload kinds share: selector, pod template, replica counts.
import { dnsLabelSchema, int32Schema } from '../../common-schemas.ts';
import type { JsonSchemaProps } from '../../json-schema.ts';
import { RULES } from '../../rules.ts';

// CEL iterates over selectors and labels, so every map, list and string there is bounded:
// the apiserver rejects a CRD whose rules could exceed its cost budget.
const MAX_LABELS = 64;
const MAX_SELECTOR_REQUIREMENTS = 32;
const MAX_REQUIREMENT_VALUES = 64;

const labelValueSchema: JsonSchemaProps = {
  type: 'string',
  maxLength: 63,
  pattern: '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$',
};

const labelsSchema: JsonSchemaProps = {
  type: 'object',
  maxProperties: MAX_LABELS,
  additionalProperties: labelValueSchema,
};

/** Template labels become the pods' labels; the operator's marker key is reserved. */
const templateLabelsSchema: JsonSchemaProps = {
  ...labelsSchema,
  'x-kubernetes-validations': [RULES.templateLabelNotReserved],
};

const annotationsSchema: JsonSchemaProps = {
  type: 'object',
  additionalProperties: { type: 'string' },
};

const labelSelectorRequirementSchema: JsonSchemaProps = {
  type: 'object',
  required: ['key', 'operator'],
  properties: {
    key: { type: 'string', minLength: 1, maxLength: 317 },
    operator: { type: 'string', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] },
    values: { type: 'array', maxItems: MAX_REQUIREMENT_VALUES, items: labelValueSchema },
  },
  'x-kubernetes-validations': [RULES.selectorRequirementValues],
};

export const labelSelectorSchema: JsonSchemaProps = {
  type: 'object',
  description: 'Selects the pods this object owns. Must match template.metadata.labels. Immutable.',
  properties: {
    matchLabels: labelsSchema,
    matchExpressions: {
      type: 'array',
      maxItems: MAX_SELECTOR_REQUIREMENTS,
      items: labelSelectorRequirementSchema,
      'x-kubernetes-list-type': 'atomic',
    },
  },
  'x-kubernetes-map-type': 'atomic',
  'x-kubernetes-validations': [RULES.selectorNotEmpty, RULES.selectorKeyNotReserved, RULES.selectorImmutable],
};

const containerSchema: JsonSchemaProps = {
  type: 'object',
  required: ['name', 'image'],
  properties: {
    name: dnsLabelSchema,
    image: { type: 'string', minLength: 1 },
  },
  'x-kubernetes-preserve-unknown-fields': true,
};

export const podTemplateSchema: JsonSchemaProps = {
  type: 'object',
  description: 'The pods to run. The pod spec is passed to the apiserver as written and validated there.',
  required: ['spec'],
  properties: {
    metadata: {
      type: 'object',
      properties: {
        labels: templateLabelsSchema,
        annotations: annotationsSchema,
      },
    },
    spec: {
      type: 'object',
      required: ['containers'],
      properties: {
        containers: { type: 'array', minItems: 1, items: containerSchema },
      },
      'x-kubernetes-preserve-unknown-fields': true,
    },
  },
};

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
  description: 'spec.selector in label-query form, read by the scale subresource.',
};
