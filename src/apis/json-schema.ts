// The subset of apiextensions.k8s.io/v1 JSONSchemaProps that our CRDs use, spelled with the
// JSON field names, so a schema constant is both a CRD openAPIV3Schema and an ajv schema.

export type JsonValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

export type JsonSchemaType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

/** One CEL rule, as in x-kubernetes-validations. */
export interface ValidationRule {
  readonly rule: string;
  readonly message: string;
  /** JSON path, relative to the node the rule sits on, that the apiserver reports the error at. */
  readonly fieldPath?: string;
  /** oldSelf is an optional, empty on create: a rule can then hold on create only (CRDValidationRatcheting). */
  readonly optionalOldSelf?: true;
  readonly reason?:
    | 'FieldValueInvalid'
    | 'FieldValueForbidden'
    | 'FieldValueRequired'
    | 'FieldValueDuplicate';
}

export interface JsonSchemaProps {
  readonly type?: JsonSchemaType;
  readonly format?: 'int32' | 'int64' | 'date-time';
  readonly description?: string;
  readonly properties?: { readonly [name: string]: JsonSchemaProps };
  readonly additionalProperties?: JsonSchemaProps;
  readonly items?: JsonSchemaProps;
  readonly required?: readonly string[];
  readonly enum?: readonly JsonValue[];
  readonly default?: JsonValue;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly minProperties?: number;
  readonly maxProperties?: number;
  readonly anyOf?: readonly JsonSchemaProps[];
  readonly 'x-kubernetes-int-or-string'?: true;
  readonly 'x-kubernetes-preserve-unknown-fields'?: true;
  readonly 'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-map-type'?: 'atomic' | 'granular';
  readonly 'x-kubernetes-validations'?: readonly ValidationRule[];
}

/** The vendor keywords the apiserver understands and plain JSON Schema does not. */
export const KUBERNETES_SCHEMA_KEYWORDS = [
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
] as const;
