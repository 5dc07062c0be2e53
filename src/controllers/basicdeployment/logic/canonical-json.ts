/**
 * Deterministic JSON: object keys sorted, and object properties that are `undefined` or `null`
 * left out. Kubernetes treats an absent optional field, an explicit null and (in typed clients) an
 * undefined property as the same thing, so they must serialize the same to hash the same.
 * Array elements are kept in order; an undefined element becomes `null` like JSON.stringify.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'object':
      return canonicalObject(value);
    default:
      throw new TypeError(`canonicalJson: cannot serialize a value of type ${typeof value}`);
  }
}

function canonicalObject(value: object): string {
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map((item: unknown) => canonicalJson(item)).join(',')}]`;
  const entries = Object.entries(value)
    .filter(([, v]) => v !== undefined && v !== null)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, v]) => `${JSON.stringify(key)}:${canonicalJson(v)}`);
  return `{${entries.join(',')}}`;
}
