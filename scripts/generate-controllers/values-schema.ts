// The `concurrency` property of the chart's values.schema.json: the default worker count and one for
// each controller. The rest of the file is written by hand, so only that property is rewritten, in
// the file's own formatting, and the rest of the text is left as it is.
import { isDeepStrictEqual } from 'node:util';

export const VALUES_SCHEMA_FILE = 'charts/basic-operator/values.schema.json';

const DEFAULT = 'default';

/** The property from its key to its closing brace, as the file indents it (4 spaces in). */
const CONCURRENCY_PROPERTY = /^ {4}"concurrency": \{\n[\s\S]*?\n {4}\}/m;

function concurrencyProperty(controllerNames: readonly string[], notice: string): string {
  const workers = [DEFAULT, ...[...controllerNames].sort()].map(
    (name) => `        ${JSON.stringify(name)}: { "$ref": "#/definitions/workers" }`,
  );
  return [
    '    "concurrency": {',
    `      "$comment": ${JSON.stringify(notice)},`,
    '      "type": "object",',
    '      "additionalProperties": false,',
    `      "required": [${JSON.stringify(DEFAULT)}],`,
    '      "properties": {',
    workers.join(',\n'),
    '      }',
    '    }',
  ].join('\n');
}

type Schema = { properties?: Record<string, unknown> };

function withoutConcurrency(schema: Schema): Schema {
  const { concurrency: _, ...properties } = schema.properties ?? {};
  return { ...schema, properties };
}

/** `schema` (the file's text) with its `concurrency` property written for `controllerNames`. */
export function valuesSchemaJson(schema: string, controllerNames: readonly string[], notice: string): string {
  if (controllerNames.includes(DEFAULT)) {
    throw new Error(`${VALUES_SCHEMA_FILE}: a controller may not be named "${DEFAULT}"`);
  }
  if (!CONCURRENCY_PROPERTY.test(schema)) {
    throw new Error(`${VALUES_SCHEMA_FILE}: no "concurrency" property 4 spaces in to rewrite`);
  }
  const written = schema.replace(CONCURRENCY_PROPERTY, () => concurrencyProperty(controllerNames, notice));
  // The rewrite is textual: hold it to having changed that property and nothing else.
  if (!isDeepStrictEqual(withoutConcurrency(JSON.parse(written)), withoutConcurrency(JSON.parse(schema)))) {
    throw new Error(`${VALUES_SCHEMA_FILE}: rewriting "concurrency" changed more than that property`);
  }
  return written;
}
