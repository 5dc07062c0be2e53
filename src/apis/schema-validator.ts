// Compiles a CRD openAPIV3Schema into an ajv validator that reports errors the way the apiserver
// and kubectl do: "spec.replicas: must be >= 0". CEL rules are not run here; validation.ts checks them.
import { Ajv, type ErrorObject } from 'ajv';
import { type JsonSchemaProps, KUBERNETES_SCHEMA_KEYWORDS } from './json-schema.ts';

export type ValidationResult = { valid: true } | { valid: false; errors: string[] };

export type SchemaValidator = (value: unknown) => ValidationResult;

const INT32_RANGE = { min: -(2 ** 31), max: 2 ** 31 - 1 };
// RFC 3339, as metav1.Time serializes.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

const LIST_MAP_KEYS = 'x-kubernetes-list-map-keys';

/** The first item whose key fields repeat an earlier item's: its index and its key, described. */
function duplicateListMapKey(
  keys: readonly string[],
  list: readonly unknown[],
): { index: number; key: string } | undefined {
  const seen = new Set<string>();
  for (const [index, item] of list.entries()) {
    if (typeof item !== 'object' || item === null) continue;
    const record = item as Record<string, unknown>;
    const key = keys.map((name) => `${name}=${JSON.stringify(record[name])}`).join(', ');
    if (seen.has(key)) return { index, key };
    seen.add(key);
  }
  return undefined;
}

// ajv reads the errors of a function keyword from the function's own `errors` property. Like the
// apiserver, the error points at the repeated item.
function checkListMapKeys(
  keys: readonly string[],
  list: readonly unknown[],
  _parentSchema?: unknown,
  data?: { instancePath: string },
): boolean {
  const duplicate = duplicateListMapKey(keys, list);
  checkListMapKeys.errors = duplicate
    ? [
        {
          keyword: LIST_MAP_KEYS,
          instancePath: `${data?.instancePath ?? ''}/${duplicate.index}`,
          message: `duplicate entry with ${duplicate.key}`,
          params: { key: duplicate.key },
        },
      ]
    : [];
  return duplicate === undefined;
}
checkListMapKeys.errors = [] as Partial<ErrorObject>[];

function createAjv(): Ajv {
  // allErrors: report every problem at once, as the apiserver does. strictTypes is off because
  // int-or-string nodes carry number and string keywords without a single `type`.
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, logger: false });
  // `type: integer` already rejects fractions; the formats only add the range.
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => n >= INT32_RANGE.min && n <= INT32_RANGE.max,
  });
  ajv.addFormat('int64', { type: 'number', validate: () => true });
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => DATE_TIME.test(s) });
  for (const keyword of KUBERNETES_SCHEMA_KEYWORDS) {
    if (keyword === LIST_MAP_KEYS) continue;
    // Known, so strict mode accepts them; their meaning is enforced by the schema around them or in validation.ts.
    ajv.addKeyword({ keyword });
  }
  ajv.addKeyword({
    keyword: LIST_MAP_KEYS,
    type: 'array',
    schemaType: 'array',
    errors: true,
    validate: checkListMapKeys,
  });
  return ajv;
}

let sharedAjv: Ajv | undefined;

/**
 * The schema ajv checks: the CRD schema, plus what the apiserver enforces outside it: apiVersion and
 * kind must name the resource, and (like kubectl's strict field validation) unknown fields are errors
 * instead of being silently pruned.
 */
function strictSchema(
  schema: JsonSchemaProps,
  identity: { apiVersion: string; kind: string },
): JsonSchemaProps {
  const root = rejectUnknownFields(schema);
  return {
    ...root,
    required: ['apiVersion', 'kind', ...(root.required ?? [])],
    properties: {
      ...root.properties,
      apiVersion: { type: 'string', enum: [identity.apiVersion] },
      kind: { type: 'string', enum: [identity.kind] },
    },
  };
}

function rejectUnknownFields(schema: JsonSchemaProps): JsonSchemaProps {
  const result: Record<string, unknown> = { ...schema };
  if (schema.properties) {
    result.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, child]) => [name, rejectUnknownFields(child)]),
    );
    if (!schema['x-kubernetes-preserve-unknown-fields'] && !schema.additionalProperties) {
      result.additionalProperties = false;
    }
  }
  if (schema.items) result.items = rejectUnknownFields(schema.items);
  if (schema.additionalProperties)
    result.additionalProperties = rejectUnknownFields(schema.additionalProperties);
  return result as JsonSchemaProps;
}

/** JSON pointer to the apiserver's field path: /spec/volumes/0/name to spec.volumes[0].name. */
function fieldPath(instancePath: string, child?: string): string {
  const segments = instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (child !== undefined) segments.push(child);
  let path = '';
  for (const segment of segments) {
    if (/^\d+$/.test(segment)) path += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(segment)) path += path === '' ? segment : `.${segment}`;
    else path += `[${segment}]`;
  }
  return path === '' ? '<root>' : path;
}

function describeError(error: ErrorObject): string | undefined {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${fieldPath(error.instancePath, String(params.missingProperty))}: is required`;
    case 'additionalProperties':
      return `${fieldPath(error.instancePath, String(params.additionalProperty))}: unknown field`;
    case 'enum': {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues : [];
      return `${fieldPath(error.instancePath)}: must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;
    }
    case 'minLength':
      if (params.limit === 1) return `${fieldPath(error.instancePath)}: must not be empty`;
      return `${fieldPath(error.instancePath)}: ${error.message}`;
    case 'anyOf':
      // The only anyOf in our schemas is int-or-string.
      return `${fieldPath(error.instancePath)}: must be an integer or a string`;
    default:
      // The branches of an anyOf explain themselves badly ("must be integer", "must be string"):
      // the anyOf error above says it once.
      if (error.schemaPath.includes('/anyOf/')) return undefined;
      return `${fieldPath(error.instancePath)}: ${error.message ?? `failed ${error.keyword}`}`;
  }
}

function formatErrors(errors: readonly ErrorObject[]): string[] {
  const messages = errors.map(describeError).filter((message) => message !== undefined);
  return [...new Set(messages)];
}

export function compileSchemaValidator(
  schema: JsonSchemaProps,
  identity: { apiVersion: string; kind: string },
): SchemaValidator {
  sharedAjv ??= createAjv();
  const validate = sharedAjv.compile(strictSchema(schema, identity));
  return (value) =>
    validate(value) ? { valid: true } : { valid: false, errors: formatErrors(validate.errors ?? []) };
}
