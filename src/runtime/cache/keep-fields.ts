import type { KubeObject } from '../client/object.ts';

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

declare const keptShape: unique symbol;

/**
 * A T as a cache transform of shape S leaves it: only the fields S names, each as optional or
 * required as in T, so reading a field S drops does not compile. Write S `as const` (and
 * `satisfies Shape<T>`) so its field names are known. A whole T (read live from the API server) is
 * a Kept<T, S>. A Kept<T, S> also carries S, type-level only: it is a Kept<T, S2> only when S keeps
 * every field S2 does, so an object cached with fewer fields cannot be handed to a function that
 * reads more.
 */
export type Kept<T, S> = (string extends keyof T
  ? // A map (labels, annotations): only the keys S names.
    { -readonly [K in keyof S]?: KeptValue<T[keyof T & string], S[K]> }
  : { [K in keyof T as K extends keyof S ? K : never]: KeptValue<T[K], S[K & keyof S]> }) & {
  readonly [keptShape]?: KeptFields<S>;
};

type KeptValue<V, F> = F extends true | 'shared'
  ? V
  : V extends readonly (infer E)[]
    ? Kept<E, F>[]
    : V extends object
      ? Kept<V, F>
      : V;

/** S as a type that a bigger shape is assignable to: a field kept whole (never) is any shape of it. */
type KeptFields<S> = { readonly [K in keyof S]: S[K] extends true | 'shared' ? never : KeptFields<S[K]> };

/**
 * What every reader of a cached object may expect of it, the runtime's own included: what it is (an
 * Event's reference names it), and the metadata a metadata-only cache keeps too (slimMetadata):
 * identity (keys, uid preconditions; the store compares resourceVersions after a relist), labels
 * (selectors, adoption), owners (controller references, the owner index), deletion (active or
 * terminating) and age. A shape of a cached kind starts from it.
 */
export const OBJECT_FIELDS = {
  apiVersion: 'shared',
  kind: 'shared',
  metadata: {
    name: true,
    namespace: 'shared',
    uid: true,
    resourceVersion: true,
    creationTimestamp: 'shared',
    deletionTimestamp: 'shared',
    labels: 'shared',
    ownerReferences: 'shared',
  },
} as const satisfies Shape<KubeObject>;

/**
 * The union of `shapes`: every field one of them keeps. A field one keeps whole is kept whole; kept
 * with its strings shared by one, it is shared (another's `true` is a value many objects may still
 * repeat); nested in all, its shapes are merged.
 */
export function mergeShapes<T>(...shapes: readonly Shape<T>[]): Shape<T> {
  return (shapes as readonly AnyShape[]).reduce<AnyShape>(mergeTwo, {}) as Shape<T>;
}

function mergeTwo(a: AnyShape, b: AnyShape): AnyShape {
  const out: Record<string, FieldKept> = {};
  for (const field of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const kept = mergeField(a[field], b[field]);
    if (kept !== undefined) out[field] = kept;
  }
  return out;
}

type FieldKept = true | 'shared' | AnyShape;

function mergeField(a: FieldKept | undefined, b: FieldKept | undefined): FieldKept | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (a === 'shared' || b === 'shared') return 'shared';
  if (a === true || b === true) return true;
  return mergeTwo(a, b);
}

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
