import jsonPatch from 'fast-json-patch';
import { ApiError, PATCH_NOT_APPLICABLE_MESSAGE } from '../../../src/runtime/client/errors.ts';
import type { DeleteOptions, PatchRequest } from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { apiVersionOf, type ResourceType, resourceId } from '../../../src/runtime/client/resource.ts';
import { fieldSelectorMatches, labelSelectorMatches } from './selectors.ts';

export interface ListQuery {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** An object as the server keeps it: wire JSON, so timestamps are strings. */
interface Stored {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    generateName?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    labels?: Record<string, string>;
  };
  status?: unknown;
}

/** A copy in wire form: Dates become RFC 3339 strings, undefined members go. */
function wire<R>(obj: unknown): R {
  return JSON.parse(JSON.stringify(obj ?? null));
}

function stored(obj: unknown): Stored {
  const copy = wire<Stored>(obj);
  copy.metadata ??= {};
  return copy;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** RFC 7386 JSON Merge Patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return patch;
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/** What generation counts: everything but metadata and status (the spec, for our types). */
function specOf(obj: Stored): string {
  const { metadata: _metadata, status: _status, ...rest } = obj;
  return JSON.stringify(rest);
}

/** ObjectMeta's lists and maps are `omitempty`: an emptied one is not sent back at all. */
function omitEmpty(metadata: Stored['metadata']): Stored['metadata'] {
  return Object.fromEntries(
    Object.entries(metadata).filter(
      ([, v]) => !(typeof v === 'object' && v !== null && Object.keys(v).length === 0),
    ),
  );
}

function keyOf(obj: Stored): string {
  const { namespace, name = '' } = obj.metadata;
  return namespace ? `${namespace}/${name}` : name;
}

function resourceName(type: ResourceType): string {
  return type.group ? `${type.plural}.${type.group}` : type.plural;
}

const notFound = (type: ResourceType, name: string) =>
  new ApiError(404, 'NotFound', `${resourceName(type)} "${name}" not found`);
const alreadyExists = (type: ResourceType, name: string) =>
  new ApiError(409, 'AlreadyExists', `${resourceName(type)} "${name}" already exists`, {
    name,
    kind: type.plural,
  });
const modified = (type: ResourceType, name: string) =>
  new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${resourceName(type)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
  );
const preconditionFailed = (what: string, wanted: string | undefined, found: string | undefined) =>
  new ApiError(
    409,
    'Conflict',
    `Precondition failed: ${what} in precondition: ${wanted}, ${what} in object meta: ${found}`,
  );

/**
 * An API server in memory, for reconciler tests: objects by resource type, with what the real one
 * adds on the way (uid, resourceVersion, generation, creationTimestamp, names from generateName) and
 * its answers (NotFound, AlreadyExists, Conflict on a stale resourceVersion or a uid precondition,
 * 422 for a JSON Patch that does not apply). Status is a subresource: writes to the main resource
 * leave it alone. Deleting an object with finalizers (or in the foreground) only marks it deleted; it
 * goes once its last finalizer does. Every answer is a copy in wire form (timestamps are strings).
 */
export class FakeApiServer {
  readonly #objects = new Map<string, Map<string, Stored>>();
  /** Resources listed by discovery, per group/version (see serve()). */
  readonly #served = new Map<string, ResourceType[]>();
  readonly #now: () => Date;
  #resourceVersion = 0;
  #uids = 0;
  #names = 0;

  constructor(options: { now?: () => Date } = {}) {
    this.#now = options.now ?? (() => new Date());
  }

  /** The latest resourceVersion handed out. */
  get resourceVersion(): string {
    return String(this.#resourceVersion);
  }

  /**
   * Lists `types` in discovery (`GET /apis/<group>/<version>`, or `/api/v1`), as an API server that
   * serves them: a kind known only at run time (a CRD's) is one the test serves and seeds.
   */
  serve(...types: ResourceType[]): void {
    for (const type of types) {
      const gv = apiVersionOf(type);
      const list = this.#served.get(gv) ?? [];
      if (!list.some((t) => t.kind === type.kind)) list.push(type);
      this.#served.set(gv, list);
    }
  }

  /** Stops listing the kind in discovery, as when its CRD is deleted. */
  unserve(type: ResourceType): void {
    const gv = apiVersionOf(type);
    this.#served.set(
      gv,
      (this.#served.get(gv) ?? []).filter((t) => t.kind !== type.kind),
    );
  }

  /** The APIResourceList of a discovery path; 404 for a group/version nothing is served in. */
  discover(path: string): { kind: 'APIResourceList'; groupVersion: string; resources: object[] } {
    const match = /^\/(?:api\/(v[^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(path);
    const groupVersion = match ? (match[1] ?? `${match[2]}/${match[3]}`) : undefined;
    const served = groupVersion ? this.#served.get(groupVersion) : undefined;
    if (!groupVersion || !served?.length) {
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    }
    return {
      kind: 'APIResourceList',
      groupVersion,
      resources: served.map((t) => ({ name: t.plural, kind: t.kind, namespaced: t.namespaced, verbs: [] })),
    };
  }

  /** Stores objects as if created earlier: their uid, timestamps, generation and status are kept. */
  seed<T extends KubeObject>(type: ResourceType<T>, ...objects: T[]): T[] {
    return objects.map((obj) => {
      const copy = stored(obj);
      copy.metadata.uid ??= this.#uid();
      copy.metadata.creationTimestamp ??= this.#timestamp();
      copy.metadata.generation ??= 1;
      return this.#put(type, copy);
    });
  }

  /** `dryRun`: answered as a create would be (admission included), and nothing stored. */
  create<T extends KubeObject>(type: ResourceType<T>, obj: T, options: { dryRun?: boolean } = {}): T {
    const copy = stored(obj);
    const metadata = copy.metadata;
    if (!metadata.name && metadata.generateName) metadata.name = metadata.generateName + this.#suffix();
    if (!metadata.name) throw new ApiError(422, 'Invalid', 'name or generateName is required');
    if (this.#bucket(type).has(keyOf(copy))) throw alreadyExists(type, metadata.name);
    metadata.uid = this.#uid();
    metadata.creationTimestamp = this.#timestamp();
    metadata.generation = 1;
    delete metadata.deletionTimestamp;
    delete copy.status;
    if (options.dryRun) return wire({ apiVersion: apiVersionOf(type), kind: type.kind, ...copy });
    return this.#put(type, copy);
  }

  get<T extends KubeObject>(type: ResourceType<T>, namespace: string | undefined, name: string): T {
    return wire(this.#stored(type, namespace, name));
  }

  list<T extends KubeObject>(type: ResourceType<T>, query: ListQuery = {}): T[] {
    return [...this.#bucket(type).values()]
      .filter((obj) => !query.namespace || obj.metadata.namespace === query.namespace)
      .filter((obj) => labelSelectorMatches(query.labelSelector, obj.metadata.labels))
      .filter((obj) => fieldSelectorMatches(query.fieldSelector, obj))
      .sort((a, b) => keyOf(a).localeCompare(keyOf(b)))
      .map((obj) => wire(obj));
  }

  /** PUT of the object, or of its status (`subresource: 'status'`); a stale resourceVersion conflicts. */
  update<T extends KubeObject>(type: ResourceType<T>, obj: T, subresource?: string): T {
    const next = stored(obj);
    const name = next.metadata.name ?? '';
    const current = this.#stored(type, next.metadata.namespace, name);
    const rv = next.metadata.resourceVersion;
    if (rv && rv !== current.metadata.resourceVersion) throw modified(type, name);
    return this.#write(type, current, next, subresource);
  }

  patch<T extends KubeObject>(type: ResourceType<T>, request: PatchRequest): T {
    const current = this.#stored(type, request.namespace, request.name);
    let next: Stored;
    switch (request.patchType) {
      case 'json':
        try {
          next = jsonPatch.applyPatch(stored(current), wire(request.body), true).newDocument;
        } catch (err) {
          if (!(err instanceof jsonPatch.JsonPatchError)) throw err;
          // kube-apiserver answers a failed `test` and a path that does not resolve alike.
          throw new ApiError(422, 'Invalid', PATCH_NOT_APPLICABLE_MESSAGE);
        }
        break;
      case 'merge': {
        // A resourceVersion in a merge patch is a precondition, as on the real API server.
        const rv = stored(request.body).metadata.resourceVersion;
        if (rv && rv !== current.metadata.resourceVersion) throw modified(type, request.name);
        next = stored(mergePatch(current, wire(request.body)));
        break;
      }
      default:
        throw new Error(`the fake API server does not implement ${request.patchType} patches`);
    }
    return this.#write(type, current, next, request.subresource);
  }

  delete(type: ResourceType, namespace: string | undefined, name: string, options: DeleteOptions = {}) {
    const current = this.#stored(type, namespace, name);
    const { uid, resourceVersion } = options.preconditions ?? {};
    if (uid && uid !== current.metadata.uid) throw preconditionFailed('UID', uid, current.metadata.uid);
    if (resourceVersion && resourceVersion !== current.metadata.resourceVersion) {
      throw preconditionFailed('ResourceVersion', resourceVersion, current.metadata.resourceVersion);
    }
    const next = stored(current);
    const finalizers = next.metadata.finalizers ?? [];
    if (options.propagationPolicy === 'Foreground' && !finalizers.includes('foregroundDeletion')) {
      next.metadata.finalizers = [...finalizers, 'foregroundDeletion'];
    }
    next.metadata.deletionTimestamp ??= this.#timestamp();
    return this.#write(type, current, next, undefined, true);
  }

  #stored(type: ResourceType, namespace: string | undefined, name: string): Stored {
    const found = this.#bucket(type).get(namespace && type.namespaced ? `${namespace}/${name}` : name);
    if (!found) throw notFound(type, name);
    return found;
  }

  /** Stores the result of a write: generation, resourceVersion, and removal once deleted without finalizers. */
  #write<T extends KubeObject>(
    type: ResourceType<T>,
    current: Stored,
    next: Stored,
    subresource: string | undefined,
    deleting = false,
  ): T {
    let result: Stored;
    if (subresource === 'status') {
      result = { ...stored(current), status: next.status };
    } else {
      result = { ...next, status: current.status };
      if (result.status === undefined) delete result.status;
      // Identity and timestamps are the server's.
      const metadata = result.metadata;
      metadata.uid = current.metadata.uid;
      metadata.creationTimestamp = current.metadata.creationTimestamp;
      metadata.generation = (current.metadata.generation ?? 1) + (specOf(current) === specOf(result) ? 0 : 1);
      if (!deleting) metadata.deletionTimestamp = current.metadata.deletionTimestamp;
      if (metadata.deletionTimestamp === undefined) delete metadata.deletionTimestamp;
    }
    if (result.metadata.deletionTimestamp && !result.metadata.finalizers?.length) {
      this.#bucket(type).delete(keyOf(result));
      return wire(result);
    }
    return this.#put(type, result);
  }

  #put<T extends KubeObject>(type: ResourceType<T>, obj: Stored): T {
    obj.apiVersion ??= apiVersionOf(type);
    obj.kind ??= type.kind;
    obj.metadata = { ...omitEmpty(obj.metadata), resourceVersion: String(++this.#resourceVersion) };
    this.#bucket(type).set(keyOf(obj), obj);
    return wire(obj);
  }

  #bucket(type: ResourceType): Map<string, Stored> {
    const id = resourceId(type);
    let bucket = this.#objects.get(id);
    if (!bucket) {
      bucket = new Map();
      this.#objects.set(id, bucket);
    }
    return bucket;
  }

  #uid(): string {
    return `00000000-0000-4000-8000-${String(++this.#uids).padStart(12, '0')}`;
  }

  /** Deterministic stand-in for the five random characters the API server appends. */
  #suffix(): string {
    return String(++this.#names).padStart(5, '0');
  }

  /** metav1.Time: RFC 3339 with whole seconds. */
  #timestamp(): string {
    return this.#now()
      .toISOString()
      .replace(/\.\d+Z$/, 'Z');
  }
}
