/**
 * Deterministic JSON: object keys sorted, and object properties that are `undefined` or `null`
 * left out. Kubernetes treats an absent optional field, an explicit null and (in typed clients) an
 * undefined property as the same thing, so they must serialize the same to hash the same.
 * Array elements are kept in order; an undefined element becomes `null` like JSON.stringify.
 *
 * It walks with a stack of its own rather than by recursion: a template is a user's object, which the
 * apiserver lets nest 10,000 levels deep, beyond Node's call stack.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // What is left to write, the next on top: a value to serialize, or text to write as it is.
  const pending: Array<{ value: unknown } | { text: string }> = [{ value }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if ('text' in next) out.push(next.text);
    else write(next.value, out, pending);
  }
  return out.join('');
}

/** Writes a scalar to `out`; pushes an object's or array's parts onto `pending`, last first. */
function write(value: unknown, out: string[], pending: Array<{ value: unknown } | { text: string }>): void {
  if (value === undefined || value === null) {
    out.push('null');
    return;
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      out.push(JSON.stringify(value));
      return;
    case 'number':
      out.push(Number.isFinite(value) ? JSON.stringify(value) : 'null');
      return;
    case 'object':
      break;
    default:
      throw new TypeError(`canonicalJson: cannot serialize a value of type ${typeof value}`);
  }
  if (value instanceof Date) {
    out.push(JSON.stringify(value.toISOString()));
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    pending.push({ text: ']' });
    for (let i = value.length - 1; i >= 0; i--) {
      pending.push({ value: value[i] as unknown });
      if (i > 0) pending.push({ text: ',' });
    }
    return;
  }
  const entries = Object.entries(value)
    .filter(([, v]) => v !== undefined && v !== null)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  out.push('{');
  pending.push({ text: '}' });
  for (let i = entries.length - 1; i >= 0; i--) {
    const [key, v] = entries[i] as [string, unknown];
    pending.push({ value: v });
    pending.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(key)}:` });
  }
}
