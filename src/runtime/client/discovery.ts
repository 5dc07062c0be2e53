import { isNotFound } from './errors.ts';
import type { KubeClient } from './kube-client.ts';
import type { Unstructured } from './object.ts';
import { type ResourceType, resourceOf } from './resource.ts';

/** What discovery needs of the client: one GET. */
export type DiscoveryClient = Pick<KubeClient, 'request'>;

/** metav1.APIResourceList, as much of it as discovery reads. */
interface ApiResourceList {
  resources?: Array<{ name?: string; kind?: string; namespaced?: boolean }>;
}

/** One group/version's resources, by kind, and when they were read. */
interface GroupVersionEntry {
  readonly byKind: ReadonlyMap<string, ResourceType<Unstructured>>;
  readonly fetchedAt: number;
}

/** A kind found, or not; `retryAfterMs` when the answer came from a list too recent to read again. */
export type DiscoveryAnswer =
  | { found: true; resource: ResourceType<Unstructured> }
  | { found: false; retryAfterMs?: number };

export interface ResourceDiscoveryOptions {
  /**
   * A group/version is read again on a miss at most this often (default 1 s): a kind nobody serves
   * costs one GET per interval, however many objects name it.
   */
  minRefreshMs?: number;
  now?: () => number;
}

/** `group/version` (or `v1` for the core group) split into its parts. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/**
 * Which resource serves a kind, from the API server's discovery document of its group/version
 * (`GET /apis/<group>/<version>`, client-go's discovery client with a memory cache). Each
 * group/version is read once and kept; a kind it does not list reads it again (a CRD installed
 * since), at most once per `minRefreshMs`, and concurrent lookups share one request. A group/version
 * the server does not serve (404) is a list without kinds.
 */
export class ResourceDiscovery {
  readonly #client: DiscoveryClient;
  readonly #minRefreshMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, GroupVersionEntry>();
  readonly #inFlight = new Map<string, Promise<GroupVersionEntry>>();

  constructor(client: DiscoveryClient, options: ResourceDiscoveryOptions = {}) {
    this.#client = client;
    this.#minRefreshMs = options.minRefreshMs ?? 1000;
    this.#now = options.now ?? Date.now;
  }

  /** The resource of `kind` in `apiVersion`, reading discovery when the cache does not know it. */
  async lookup(apiVersion: string, kind: string, signal?: AbortSignal): Promise<DiscoveryAnswer> {
    const cached = this.#entries.get(apiVersion);
    const known = cached?.byKind.get(kind);
    if (known) return { found: true, resource: known };
    if (cached) {
      const age = this.#now() - cached.fetchedAt;
      if (age < this.#minRefreshMs) return { found: false, retryAfterMs: this.#minRefreshMs - age };
    }
    const entry = await this.#fetch(apiVersion, signal);
    const resource = entry.byKind.get(kind);
    return resource ? { found: true, resource } : { found: false };
  }

  /** The resource of `kind` in `apiVersion` as last read, without a request. */
  cached(apiVersion: string, kind: string): ResourceType<Unstructured> | undefined {
    return this.#entries.get(apiVersion)?.byKind.get(kind);
  }

  #fetch(apiVersion: string, signal: AbortSignal | undefined): Promise<GroupVersionEntry> {
    let pending = this.#inFlight.get(apiVersion);
    if (!pending) {
      pending = this.#read(apiVersion, signal).finally(() => this.#inFlight.delete(apiVersion));
      this.#inFlight.set(apiVersion, pending);
    }
    return pending;
  }

  async #read(apiVersion: string, signal: AbortSignal | undefined): Promise<GroupVersionEntry> {
    const { group, version } = parseApiVersion(apiVersion);
    const path = group ? `/apis/${group}/${version}` : `/api/${version}`;
    let list: ApiResourceList;
    try {
      list = (await this.#client.request<ApiResourceList>('GET', path, { signal })) ?? {};
    } catch (err) {
      if (!isNotFound(err)) throw err;
      list = {};
    }
    const byKind = new Map<string, ResourceType<Unstructured>>();
    for (const r of list.resources ?? []) {
      // Subresources (`pods/status`) share their parent's kind.
      if (!r.name || !r.kind || r.name.includes('/') || byKind.has(r.kind)) continue;
      byKind.set(
        r.kind,
        resourceOf<Unstructured>()({
          group,
          version,
          kind: r.kind,
          plural: r.name,
          namespaced: r.namespaced === true,
        }),
      );
    }
    const entry: GroupVersionEntry = { byKind, fetchedAt: this.#now() };
    this.#entries.set(apiVersion, entry);
    return entry;
  }
}
