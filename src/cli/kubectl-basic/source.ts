// Where the plugin reads objects from: the API server (with the user's rights), or recorded objects.
import { APPS_GROUP, INFRA_GROUP } from '../../apis/index.ts';
import { ResourceDiscovery } from '../../runtime/client/discovery.ts';
import { ApiError } from '../../runtime/client/errors.ts';
import type { KubeClient } from '../../runtime/client/kube-client.ts';
import type { ObjectList, Unstructured } from '../../runtime/client/object.ts';
import type { ResourceType } from '../../runtime/client/resource.ts';

/** A core/v1 Event about one object, as much as the plugin shows. */
export interface EventRecord {
  type: string;
  reason: string;
  message: string;
  /** RFC 3339: when it last happened. */
  time: string;
  count: number;
  /** involvedObject.fieldPath: the part of the object it is about (`spec.containers{db}`), if any. */
  fieldPath?: string;
}

/** What the tree and the why-walk read. Every list is of one namespace (or all, when undefined). */
export interface ObjectSource {
  /** undefined when the object does not exist. */
  get(type: ResourceType<Unstructured>, namespace: string, name: string): Promise<Unstructured | undefined>;
  /** With `labelSelector`, only what matches it (the source may return more: callers filter by owner). */
  list(
    type: ResourceType<Unstructured>,
    namespace: string | undefined,
    labelSelector?: string,
  ): Promise<Unstructured[]>;
  /** Events about the object of `uid`, newest first; empty when Events may not be read. */
  events(namespace: string, uid: string): Promise<EventRecord[]>;
  /** The resource serving `kind` in `apiVersion`, from discovery; undefined when none does. */
  resolve(apiVersion: string, kind: string): Promise<ResourceType<Unstructured> | undefined>;
}

/** A failure the user can act on, said in one line; exit code 2. */
export class AccessError extends Error {
  override readonly name = 'AccessError';
}

export const CORE = {
  Pod: { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true },
  PersistentVolumeClaim: {
    group: '',
    version: 'v1',
    kind: 'PersistentVolumeClaim',
    plural: 'persistentvolumeclaims',
    namespaced: true,
  },
  Job: { group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', namespaced: true },
  StatefulSet: {
    group: 'apps',
    version: 'v1',
    kind: 'StatefulSet',
    plural: 'statefulsets',
    namespaced: true,
  },
  Event: { group: '', version: 'v1', kind: 'Event', plural: 'events', namespaced: true },
} as const satisfies Record<string, ResourceType<Unstructured>>;

const OPERATOR_GROUPS = new Set([APPS_GROUP, INFRA_GROUP]);

function resourceName(type: ResourceType<Unstructured>): string {
  return type.group ? `${type.plural}.${type.group}` : type.plural;
}

function where(namespace: string | undefined): string {
  return namespace ? `in namespace "${namespace}"` : 'in any namespace (-A)';
}

/**
 * What a failed read means for the user: 403 names the resource and namespace the kubeconfig may
 * not read; 404 on a collection of the operator's groups means its CRDs are not installed.
 */
export function explainReadError(
  err: unknown,
  verb: 'get' | 'list',
  type: ResourceType<Unstructured>,
  namespace: string | undefined,
): Error {
  if (!(err instanceof ApiError)) {
    const message = err instanceof Error ? err.message : String(err);
    return new AccessError(`cannot reach the API server: ${message}`);
  }
  if (err.statusCode === 403 || err.statusCode === 401) {
    const what =
      err.statusCode === 401
        ? "not authenticated (401): the kubeconfig's credentials were refused"
        : 'forbidden (403)';
    return new AccessError(
      `${what}: your kubeconfig may not ${verb} ${resourceName(type)} ${where(namespace)}`,
    );
  }
  if (err.statusCode === 404 && OPERATOR_GROUPS.has(type.group)) {
    return new AccessError(
      `the API server does not serve ${resourceName(type)}: basic-operator's CRDs are not installed in this cluster (kubectl apply -f config/crd/bases/, or install the chart)`,
    );
  }
  return new AccessError(`${verb} ${resourceName(type)} ${where(namespace)}: ${err.message}`);
}

interface CoreEvent extends Unstructured {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
  eventTime?: string;
  series?: { count?: number; lastObservedTime?: string };
  involvedObject?: { fieldPath?: string };
}

/** Reads through the user's client, each list once per run. */
export class ClusterSource implements ObjectSource {
  readonly #client: KubeClient;
  readonly #discovery: ResourceDiscovery;
  readonly #lists = new Map<string, Promise<Unstructured[]>>();

  constructor(client: KubeClient) {
    this.#client = client;
    this.#discovery = new ResourceDiscovery(client);
  }

  async get(
    type: ResourceType<Unstructured>,
    namespace: string,
    name: string,
  ): Promise<Unstructured | undefined> {
    try {
      return await this.#client.get(type, namespace, name);
    } catch (err) {
      if (
        err instanceof ApiError &&
        err.statusCode === 404 &&
        err.reason === 'NotFound' &&
        (await this.#served(type))
      ) {
        return undefined;
      }
      throw explainReadError(err, 'get', type, namespace);
    }
  }

  list(
    type: ResourceType<Unstructured>,
    namespace: string | undefined,
    labelSelector?: string,
  ): Promise<Unstructured[]> {
    const key = `${resourceName(type)}/${namespace ?? ''}?${labelSelector ?? ''}`;
    let pending = this.#lists.get(key);
    if (!pending) {
      pending = this.#client
        .list(type, { namespace, labelSelector })
        .then((list: ObjectList<Unstructured>) => list.items)
        .catch((err: unknown) => {
          throw explainReadError(err, 'list', type, namespace);
        });
      this.#lists.set(key, pending);
    }
    return pending;
  }

  async events(namespace: string, uid: string): Promise<EventRecord[]> {
    let items: CoreEvent[];
    try {
      const list = await this.#client.list<CoreEvent>(CORE.Event, {
        namespace,
        fieldSelector: `involvedObject.uid=${uid}`,
      });
      items = list.items;
    } catch (err) {
      // Events are evidence, not the answer: a user who may not read them still gets one.
      if (err instanceof ApiError && err.statusCode === 403) return [];
      throw explainReadError(err, 'list', CORE.Event, namespace);
    }
    return items
      .map((e) => ({
        type: e.type ?? '',
        reason: e.reason ?? '',
        message: e.message ?? '',
        time:
          e.series?.lastObservedTime ??
          e.lastTimestamp ??
          e.eventTime ??
          e.metadata?.creationTimestamp?.toString() ??
          '',
        count: e.series?.count ?? e.count ?? 1,
        ...(e.involvedObject?.fieldPath ? { fieldPath: e.involvedObject.fieldPath } : {}),
      }))
      .sort((a, b) => b.time.localeCompare(a.time));
  }

  async resolve(apiVersion: string, kind: string): Promise<ResourceType<Unstructured> | undefined> {
    try {
      const answer = await this.#discovery.lookup(apiVersion, kind);
      return answer.found ? answer.resource : undefined;
    } catch (err) {
      throw new AccessError(
        `discovery of ${kind} (${apiVersion}): ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  /** Whether the API server serves the type at all: a 404 of a get is then a missing object. */
  async #served(type: ResourceType<Unstructured>): Promise<boolean> {
    if (!OPERATOR_GROUPS.has(type.group)) return true;
    const found = await this.resolve(`${type.group}/${type.version}`, type.kind);
    return found !== undefined;
  }
}
