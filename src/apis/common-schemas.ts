// Schema pieces every API group uses.
import type { JsonSchemaProps, ValidationRule } from './json-schema.ts';

/** RFC 1123 label: the shape of most Kubernetes object and volume names. */
export const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** RFC 1123 subdomain: the shape of names of namespaced objects. */
export const DNS_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

export const dnsLabelSchema: JsonSchemaProps = {
  type: 'string',
  minLength: 1,
  maxLength: 63,
  pattern: DNS_LABEL_PATTERN,
};

export const objectNameSchema: JsonSchemaProps = {
  type: 'string',
  minLength: 1,
  maxLength: 253,
  pattern: DNS_SUBDOMAIN_PATTERN,
};

export const int32Schema = (minimum: number): JsonSchemaProps => ({
  type: 'integer',
  format: 'int32',
  minimum,
  maximum: 2147483647,
});

export const observedGenerationSchema: JsonSchemaProps = {
  type: 'integer',
  format: 'int64',
  minimum: 0,
  description: 'The metadata.generation the controller last acted on.',
};

export const timestampSchema: JsonSchemaProps = { type: 'string', format: 'date-time' };

/** A container image reference: no registry defines a limit; 4096 is far above any real one. */
export const imageSchema: JsonSchemaProps = { type: 'string', minLength: 1, maxLength: 4096 };

/** Words of a container's command and args. */
const MAX_ARGUMENTS = 256;
/** One word: room for an inline script or a certificate; longer ones belong in a ConfigMap. */
const MAX_ARGUMENT_LENGTH = 32768;

/** A container's command or args. */
export const argumentsSchema: JsonSchemaProps = {
  type: 'array',
  maxItems: MAX_ARGUMENTS,
  items: { type: 'string', maxLength: MAX_ARGUMENT_LENGTH },
};

/** metav1.Condition, with the same bounds controller-gen emits for it. */
export const conditionSchema: JsonSchemaProps = {
  type: 'object',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    type: {
      type: 'string',
      maxLength: 316,
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    lastTransitionTime: timestampSchema,
    reason: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
    },
    message: { type: 'string', maxLength: 32768 },
  },
};

export const conditionsSchema: JsonSchemaProps = {
  type: 'array',
  description: 'Latest observations of the object, one per condition type (metav1.Condition).',
  maxItems: 32,
  items: conditionSchema,
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
};

/**
 * The root of a custom resource schema. `metadata` stays a bare object: the apiserver validates
 * ObjectMeta itself and rejects CRDs that describe more than name and generateName.
 */
export const rootSchema = (options: {
  description: string;
  spec: JsonSchemaProps;
  status: JsonSchemaProps;
  /** CEL rules on the whole object: the only place a rule can read metadata.name. */
  rules?: readonly ValidationRule[];
}): JsonSchemaProps => ({
  type: 'object',
  description: options.description,
  required: ['spec'],
  properties: {
    // The apiserver requires both to name the CRD's group, version and kind.
    apiVersion: { type: 'string', maxLength: 317 },
    kind: { type: 'string', maxLength: 63 },
    metadata: { type: 'object' },
    spec: options.spec,
    status: options.status,
  },
  ...(options.rules ? { 'x-kubernetes-validations': options.rules } : {}),
});
