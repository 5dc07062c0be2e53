/**
 * Which fields of a T a cache transform keeps: `true` keeps a field's value as it is; `'shared'`
 * keeps it with its strings taken from a StringPool (for values many objects repeat: label keys
 * and values, owner references, node names, timestamps); a nested shape keeps those fields of it,
 * of each element for a list, and leaves the field out when none of them is there. Fields not
 * named are dropped.
 */
export type Shape<T> = { [K in keyof T]?: FieldShape<NonNullable<T[K]>> };

type FieldShape<V> =
  | true
  | 'shared'
  | (V extends readonly (infer E)[] ? Shape<E> : V extends object ? Shape<V> : never);

/** What keep() walks: the runtime's view of a shape, whatever type it was written for. */
interface AnyShape {
  readonly [field: string]: true | 'shared' | AnyShape | undefined;
}

/**
 * One copy of each string a cache holds many of. JSON.parse gives every object its own copies;
 * 10,000 pods of 1,000 sets repeat the same label values, owner names and timestamps. At `max`
 * strings the pool starts over, so strings no object holds any more cannot pile up in it.
 */
export class StringPool {
  readonly #strings = new Map<string, string>();
  readonly #max: number;

  constructor(max = 50_000) {
    this.#max = max;
  }

  intern(value: string): string {
    const known = this.#strings.get(value);
    if (known !== undefined) return known;
    if (this.#strings.size >= this.#max) this.#strings.clear();
    this.#strings.set(value, value);
    return value;
  }

  get size(): number {
    return this.#strings.size;
  }
}

/** A cache transform that keeps the fields `shape` names, as new objects; odd input never throws. */
export function keepFields<T extends object>(shape: Shape<T>, pool = new StringPool()): (obj: T) => T {
  const compiled = compile(shape as AnyShape);
  return (obj) => keep(obj, compiled, pool) as T;
}

/** A shape as a list walked once per object (Object.entries of the shape once, not per object). */
type Compiled = ReadonlyArray<readonly [field: string, kept: true | 'shared' | Compiled]>;

function compile(shape: AnyShape): Compiled {
  return Object.entries(shape).flatMap(([field, kept]) =>
    kept === undefined ? [] : [[field, kept === true || kept === 'shared' ? kept : compile(kept)] as const],
  );
}

function keep(value: unknown, shape: Compiled, pool: StringPool): unknown {
  if (Array.isArray(value)) return value.map((element) => keep(element, shape, pool));
  if (typeof value !== 'object' || value === null) return value;
  const from = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [field, kept] of shape) {
    const child = from[field];
    if (child === undefined) continue;
    if (kept === true) out[field] = child;
    else if (kept === 'shared') out[field] = shared(child, pool);
    else {
      const part = keep(child, kept, pool);
      if (!isEmptyObject(part)) out[field] = part;
    }
  }
  return out;
}

/** `{}`: nothing of a field's value was kept (a running container's `state`), so no field at all. */
function isEmptyObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const _ in value) return false;
  return true;
}

/** A copy of `value` whose strings come from the pool (property names are V8's own already). */
function shared(value: unknown, pool: StringPool): unknown {
  if (typeof value === 'string') return pool.intern(value);
  if (Array.isArray(value)) return value.map((element) => shared(element, pool));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key in value) out[key] = shared((value as Record<string, unknown>)[key], pool);
  return out;
}
