import { type KubeObject, objectKey } from '../client/object.ts';

/** Maps an object to the index values it is filed under. */
export type IndexFunc<T> = (obj: T) => readonly string[];

export const NAMESPACE_INDEX = 'namespace';
export const OWNER_UID_INDEX = 'owner-uid';
export const LABEL_INDEX = 'label';

export const byNamespace: IndexFunc<KubeObject> = (obj) => [obj.metadata?.namespace ?? ''];
export const byOwnerUid: IndexFunc<KubeObject> = (obj) =>
  (obj.metadata?.ownerReferences ?? []).map((ref) => ref.uid);
export const byLabel: IndexFunc<KubeObject> = (obj) =>
  Object.entries(obj.metadata?.labels ?? {}).map(([key, value]) => `${key}=${value}`);

export interface StoreDelta<T> {
  added: T[];
  updated: Array<{ oldObj: T; newObj: T }>;
  deleted: T[];
}

/** The objects deepFreeze has still to walk: one array for every call (it runs to the end at once). */
const unfrozen: object[] = [];

function pushUnfrozen(value: unknown): void {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) unfrozen.push(value);
}

// Walks with a stack of its own, not by recursion: the API server takes JSON nested 10,000 levels deep,
// and a recursive walk overflows Node's stack at about 5,000, which would fail every watch event of
// that object and stop the informer for every namespace. Without Object.values(): an array per object
// of every cached event was 2% of the operator's allocations.
function deepFreeze<T>(value: T): T {
  unfrozen.length = 0;
  pushUnfrozen(value);
  for (let next = unfrozen.pop(); next !== undefined; next = unfrozen.pop()) {
    Object.freeze(next);
    if (Array.isArray(next)) {
      for (const child of next) pushUnfrozen(child);
    } else {
      const record = next as Record<string, unknown>;
      for (const key in record) pushUnfrozen(record[key]);
    }
  }
  return value;
}

/**
 * The informer's thread-safe (single-threaded JS) cache: objects by key plus secondary indexes,
 * so reconciles find children by owner UID or label without scanning everything.
 * Stored objects are deep-frozen: the cache is read-only, copy before changing.
 */
export class Store<T extends KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Record<string, IndexFunc<T>> = {}) {
    this.addIndexer(NAMESPACE_INDEX, byNamespace);
    this.addIndexer(OWNER_UID_INDEX, byOwnerUid);
    this.addIndexer(LABEL_INDEX, byLabel);
    for (const [name, fn] of Object.entries(indexers)) this.addIndexer(name, fn);
  }

  addIndexer(name: string, fn: IndexFunc<T>): void {
    if (this.indexers.has(name)) return;
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.indices.set(name, index);
    for (const [key, obj] of this.items) this.indexInto(index, fn, key, obj);
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  byIndex(indexName: string, value: string): T[] {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`no index named ${indexName}`);
    const keys = index.get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const key of keys) {
      const obj = this.items.get(key);
      if (obj) out.push(obj);
    }
    return out;
  }

  /** Inserts or replaces; returns the previous object. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    deepFreeze(obj);
    this.items.set(key, obj);
    for (const [name, fn] of this.indexers) this.indexInto(this.indices.get(name)!, fn, key, obj);
    return old;
  }

  remove(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  /** Replaces the whole content (after a list), returning what changed so deletes missed while away are seen. */
  replace(objs: T[]): StoreDelta<T> {
    const delta: StoreDelta<T> = { added: [], updated: [], deleted: [] };
    const seen = new Set<string>();
    for (const obj of objs) {
      const key = objectKey(obj);
      seen.add(key);
      const old = this.upsert(obj);
      if (!old) delta.added.push(obj);
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
        delta.updated.push({ oldObj: old, newObj: obj });
    }
    for (const key of [...this.items.keys()]) {
      if (!seen.has(key)) delta.deleted.push(this.remove(key)!);
    }
    return delta;
  }

  private indexInto(index: Map<string, Set<string>>, fn: IndexFunc<T>, key: string, obj: T): void {
    for (const value of fn(obj)) {
      let keys = index.get(value);
      if (!keys) {
        keys = new Set();
        index.set(value, keys);
      }
      keys.add(key);
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      for (const value of fn(obj)) {
        const keys = index.get(value);
        if (!keys) continue;
        keys.delete(key);
        if (keys.size === 0) index.delete(value);
      }
    }
  }
}
