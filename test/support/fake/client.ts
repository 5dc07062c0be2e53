import { ApiError } from '../../../src/runtime/client/errors.ts';
import type {
  DeleteOptions,
  HttpMethod,
  KubeClient,
  ListOptions,
  PatchRequest,
  PatchType,
  RequestOptions,
  WriteOptions,
} from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject, ObjectList } from '../../../src/runtime/client/object.ts';
import type { RequestPriority } from '../../../src/runtime/client/priority-throttle.ts';
import { collectionPath, objectPath, type ResourceType } from '../../../src/runtime/client/resource.ts';
import type { FakeApiServer } from './api-server.ts';

export type Verb = 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete';

/** One call a reconciler made, as client-go's testing.Action records it. */
export interface Action {
  verb: Verb;
  kind: string;
  namespace: string;
  /** For a create with generateName: the name the server gave (the generateName if it refused, or on a dry run). */
  name: string;
  /** What was sent: the object, the patch, or the delete options. */
  body?: unknown;
  patchType?: PatchType;
  subresource?: string;
  /** The lane of the client's rate limit a patch asked for, when it asked for one. */
  priority?: RequestPriority;
  /** A create with dryRun: admission answered, nothing stored. */
  dryRun?: true;
  /** The error the call ended with. */
  error?: ApiError;
}

/** Which calls a failure applies to; a missing field matches any. */
export interface CallMatch {
  verb?: Verb;
  kind?: string;
  name?: string;
}

interface Failure {
  match: CallMatch;
  error: ApiError;
  /** Matching calls still to let through first. */
  after: number;
  times: number;
}

const READS: ReadonlySet<Verb> = new Set(['get', 'list']);

/**
 * KubeClient's public surface, answered by a FakeApiServer, recording every call in `actions`
 * (upstream's fake clientset with its action log, or FakePodControl). `fail()` makes chosen calls
 * fail the way the API server would refuse them (a quota's 403, a webhook's 422, ...).
 */
export class FakeClient
  implements Pick<KubeClient, 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete' | 'request'>
{
  readonly actions: Action[] = [];
  readonly #server: FakeApiServer;
  readonly #failures: Failure[] = [];

  constructor(server: FakeApiServer) {
    this.#server = server;
  }

  /**
   * Makes calls that match fail with `error` (they are recorded like any other): `times` of them
   * (default all), after letting the first `after` through (default none).
   */
  fail(match: CallMatch, error: ApiError, options: { after?: number; times?: number } = {}): void {
    this.#failures.push({
      match,
      error,
      after: options.after ?? 0,
      times: options.times ?? Number.POSITIVE_INFINITY,
    });
  }

  /** The calls that change something (everything but get and list), optionally of one verb and kind. */
  writes(match: CallMatch = {}): Action[] {
    return this.actions.filter((a) => !READS.has(a.verb) && matches(match, a));
  }

  /** `verb kind name` of each write (a dry run says so), the usual thing to assert on. */
  writeSummary(match: CallMatch = {}): string[] {
    return this.writes(match).map((a) => `${a.verb} ${a.kind} ${a.name}${a.dryRun ? ' (dry run)' : ''}`);
  }

  /** Forgets the calls so far (between the steps of a test). */
  clearActions(): void {
    this.actions.length = 0;
  }

  /** A raw request: only discovery (`GET /apis/<group>/<version>`) is served, recorded as a get of `Discovery`. */
  async request<T>(method: HttpMethod, path: string, _options?: RequestOptions): Promise<T> {
    const action: Action = { verb: 'get', kind: 'Discovery', namespace: '', name: path };
    this.actions.push(action);
    const failure = this.#failures.find((f) => f.times > 0 && matches(f.match, action));
    try {
      if (failure && failure.after > 0) failure.after--;
      else if (failure) {
        failure.times--;
        throw failure.error;
      }
      if (method !== 'GET') throw new Error(`the fake client serves no ${method} ${path}`);
      return this.#server.discover(path) as T;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      action.error = err;
      throw new ApiError(err.statusCode, err.reason, `${method} ${path}: ${err.message}`, err.details);
    }
  }

  async get<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
    _signal?: AbortSignal,
  ): Promise<T> {
    return this.#call(type, { verb: 'get', kind: type.kind, namespace: namespace ?? '', name }, 'GET', () =>
      this.#server.get(type, namespace, name),
    );
  }

  async list<T extends KubeObject>(type: ResourceType<T>, options: ListOptions = {}): Promise<ObjectList<T>> {
    const action: Action = { verb: 'list', kind: type.kind, namespace: options.namespace ?? '', name: '' };
    return this.#call(type, action, 'GET', () => ({
      metadata: { resourceVersion: this.#server.resourceVersion },
      items: this.#server.list(type, options),
    }));
  }

  async create<T extends KubeObject>(type: ResourceType<T>, obj: T, options?: WriteOptions): Promise<T> {
    const action = this.#action('create', type, obj, structuredClone(obj));
    action.name ||= obj.metadata?.generateName ?? '';
    const dryRun = options?.dryRun === true;
    if (dryRun) action.dryRun = true;
    const created = await this.#call(type, action, 'POST', () => this.#server.create(type, obj, { dryRun }));
    if (!dryRun) action.name = created.metadata?.name ?? action.name;
    return created;
  }

  async update<T extends KubeObject>(type: ResourceType<T>, obj: T, _options?: WriteOptions): Promise<T> {
    return this.#call(type, this.#action('update', type, obj, structuredClone(obj)), 'PUT', () =>
      this.#server.update(type, obj),
    );
  }

  async patch<T extends KubeObject>(type: ResourceType<T>, request: PatchRequest): Promise<T> {
    const action: Action = {
      verb: 'patch',
      kind: type.kind,
      namespace: request.namespace ?? '',
      name: request.name,
      body: structuredClone(request.body),
      patchType: request.patchType,
      ...(request.subresource ? { subresource: request.subresource } : {}),
      ...(request.priority ? { priority: request.priority } : {}),
    };
    return this.#call(type, action, 'PATCH', () => this.#server.patch(type, request));
  }

  async delete(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    options: DeleteOptions = {},
  ): Promise<KubeObject> {
    const { signal: _signal, ...sent } = options;
    const action: Action = { verb: 'delete', kind: type.kind, namespace: namespace ?? '', name, body: sent };
    return this.#call(type, action, 'DELETE', () => this.#server.delete(type, namespace, name, options));
  }

  #action(verb: Verb, type: ResourceType, obj: KubeObject, body: unknown): Action {
    return {
      verb,
      kind: type.kind,
      namespace: obj.metadata?.namespace ?? '',
      name: obj.metadata?.name ?? '',
      body,
    };
  }

  /** Records the call, then answers it (or fails it), with errors worded as KubeClient words them. */
  async #call<R>(type: ResourceType, action: Action, method: string, answer: () => R): Promise<R> {
    this.actions.push(action);
    const failure = this.#failures.find((f) => f.times > 0 && matches(f.match, action));
    try {
      if (failure && failure.after > 0) failure.after--;
      else if (failure) {
        failure.times--;
        throw failure.error;
      }
      return answer();
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      action.error = err;
      const path =
        action.verb === 'create' || action.verb === 'list'
          ? collectionPath(type, action.namespace)
          : objectPath(type, action.namespace, action.name, action.subresource);
      throw new ApiError(err.statusCode, err.reason, `${method} ${path}: ${err.message}`, err.details);
    }
  }
}

function matches(match: CallMatch, action: Action): boolean {
  return (
    (match.verb === undefined || match.verb === action.verb) &&
    (match.kind === undefined || match.kind === action.kind) &&
    (match.name === undefined || match.name === action.name)
  );
}

/**
 * The fakes have KubeClient's public surface, but its private members make TypeScript compare the
 * class by name, not by shape: this is the one place a fake is passed off as a KubeClient.
 */
export function asKubeClient(fake: Pick<KubeClient, 'list'>): KubeClient {
  return fake as unknown as KubeClient;
}
