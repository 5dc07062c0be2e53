import { operatorManagerOptions } from '../../../src/controllers/index.ts';
import type { Informer } from '../../../src/runtime/cache/informer.ts';
import {
  type CacheOptions,
  InformerCache,
  type InformerSelection,
} from '../../../src/runtime/cache/informer-cache.ts';
import type {
  KubeClient,
  ListOptions,
  WatchEvent,
  WatchOptions,
} from '../../../src/runtime/client/kube-client.ts';
import { type KubeObject, type ObjectList, objectKey } from '../../../src/runtime/client/object.ts';
import { type ResourceType, resourceId } from '../../../src/runtime/client/resource.ts';
import { testLogger } from '../log.ts';
import { FakeApiServer } from './api-server.ts';
import { asKubeClient, FakeClient } from './client.ts';

/** One informer's view: which objects of which type, as in a list or watch call. */
function scopeKey(type: ResourceType, options: ListOptions | WatchOptions): string {
  return [resourceId(type), options.namespace, options.labelSelector, options.metadataOnly].join('|');
}

/**
 * What the informers list and watch: the server's objects, unrecorded. A watch delivers nothing
 * until sync(); then it sends what changed on the server since the informer last heard (ADDED,
 * MODIFIED, DELETED), so between syncs the caches stand still, as caches that have not yet seen a
 * reconcile's writes do.
 */
class CacheFeed {
  readonly #server: FakeApiServer;
  /** Per informer scope: the objects it has been told about, by key. */
  readonly #told = new Map<string, Map<string, KubeObject>>();
  /** Watches waiting for the next sync, one per informer that is up to date. */
  readonly #waiting: Array<() => void> = [];
  readonly #settledWaiters: Array<{ count: number; resolve: () => void }> = [];

  constructor(server: FakeApiServer) {
    this.#server = server;
  }

  async list<T extends KubeObject>(type: ResourceType<T>, options: ListOptions = {}): Promise<ObjectList<T>> {
    const items = this.#server.list(type, options);
    this.#told.set(
      scopeKey(type, options),
      new Map(items.map((obj) => [objectKey(obj), structuredClone(obj)])),
    );
    return { metadata: { resourceVersion: this.#server.resourceVersion }, items };
  }

  async *watch<T extends KubeObject>(
    type: ResourceType,
    options: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>> {
    for (;;) {
      await new Promise<void>((resolve, reject) => {
        options.signal?.addEventListener('abort', () => reject(options.signal?.reason), { once: true });
        this.#waiting.push(resolve);
        this.#notify();
      });
      // The API server's watch answers with its objects as the type asked for, as this does.
      for (const { type: change, object } of this.#changes(type, options))
        yield { type: change, object: object as T };
    }
  }

  /** Resolves once `count` informers are up to date and waiting. */
  settled(count: number): Promise<void> {
    return new Promise((resolve) => {
      this.#settledWaiters.push({ count, resolve });
      this.#notify();
    });
  }

  /** Lets every waiting watch send its changes; returns how many there were. */
  wakeAll(): number {
    const woken = this.#waiting.splice(0);
    for (const wake of woken) wake();
    return woken.length;
  }

  #changes(type: ResourceType, options: WatchOptions): WatchEvent<KubeObject>[] {
    const key = scopeKey(type, options);
    const told = this.#told.get(key) ?? new Map<string, KubeObject>();
    const now = new Map(this.#server.list(type, options).map((obj) => [objectKey(obj), obj]));
    const events: WatchEvent<KubeObject>[] = [];
    for (const [name, obj] of now) {
      const before = told.get(name);
      if (!before) events.push({ type: 'ADDED', object: obj });
      else if (before.metadata?.resourceVersion !== obj.metadata?.resourceVersion) {
        events.push({ type: 'MODIFIED', object: obj });
      }
    }
    for (const [name, obj] of told) if (!now.has(name)) events.push({ type: 'DELETED', object: obj });
    this.#told.set(key, new Map([...now].map(([name, obj]) => [name, structuredClone(obj)])));
    return events;
  }

  #notify(): void {
    for (const waiter of [...this.#settledWaiters]) {
      if (this.#waiting.length < waiter.count) continue;
      this.#settledWaiters.splice(this.#settledWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }
}

/** The InformerCache, counting the distinct informers it hands out (one per type and selection). */
class CountingInformerCache extends InformerCache {
  readonly handedOut = new Set<object>();

  override informerFor<T extends KubeObject>(
    type: ResourceType<T>,
    selection?: InformerSelection,
  ): Informer<T> {
    const informer = super.informerFor(type, selection);
    this.handedOut.add(informer);
    return informer;
  }
}

/**
 * A cluster for reconciler tests, as upstream's controller tests have one: a FakeApiServer, a client
 * recording the actions a reconcile takes, and real informers (through a real InformerCache, with the
 * operator's cache selections) filled from the server. Seed objects, build the informers, then
 * reconcile; `sync()` lets the caches catch up with the server between steps.
 */
export class FakeCluster {
  readonly server: FakeApiServer;
  readonly client: FakeClient;
  readonly #feed: CacheFeed;
  readonly #cache: CountingInformerCache;

  constructor(options: { cache?: CacheOptions; now?: () => Date } = {}) {
    this.server = new FakeApiServer({ now: options.now });
    this.client = new FakeClient(this.server);
    this.#feed = new CacheFeed(this.server);
    this.#cache = new CountingInformerCache(
      asKubeClient(this.#feed),
      testLogger(),
      options.cache ?? operatorManagerOptions.cache,
    );
    // Never aborted: the informers wait on promises only, which keep no test process alive. Each
    // informer starts as it is asked for.
    this.#cache.start(new AbortController().signal);
  }

  /**
   * The cache the informers come from, for a manager on this cluster (fake/manager.ts): informers
   * its controllers ask for are filled from the server and waited for by sync() as well.
   */
  get cache(): InformerCache {
    return this.#cache;
  }

  /** The recording client, typed as the reconcilers take it. */
  get kubeClient(): KubeClient {
    return asKubeClient(this.client);
  }

  /** Stores objects on the server as if created earlier (the caches see them at the next sync). */
  seed<T extends KubeObject>(type: ResourceType<T>, ...objects: T[]): T[] {
    return this.server.seed(type, ...objects);
  }

  /** The informer of this type and selection, listed from the server and up to date. */
  async informer<T extends KubeObject>(
    type: ResourceType<T>,
    selection?: InformerSelection,
  ): Promise<Informer<T>> {
    const informer = this.informerFor(type, selection);
    await this.#feed.settled(this.#cache.handedOut.size);
    return informer;
  }

  /**
   * The informer of this type and selection, started but not waited for: what a reconciler that
   * creates informers at run time (KindWatches) is given as its InformerSource. sync() waits for it.
   */
  informerFor<T extends KubeObject>(type: ResourceType<T>, selection?: InformerSelection): Informer<T> {
    return this.#cache.informerFor(type, selection);
  }

  /** Lets every informer catch up with the server, as the watch events of a reconcile's writes would. */
  async sync(): Promise<void> {
    await this.#feed.settled(this.#cache.handedOut.size);
    await this.#feed.settled(this.#feed.wakeAll());
  }
}
