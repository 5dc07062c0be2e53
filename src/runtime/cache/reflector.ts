import { isGone } from '../client/errors.ts';
import type { KubeClient, WatchEvent } from '../client/kube-client.ts';
import { type KubeObject, objectKey } from '../client/object.ts';
import type { ResourceType } from '../client/resource.ts';
import { errorMessage, type Logger } from '../log.ts';
import { JitteredBackoff, sleep } from './backoff.ts';
import type { Store } from './store.ts';

export interface EventHandler<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

export interface ReflectorScope {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** List and watch metadata only (PartialObjectMetadata), as client-go's metadata informers do. */
  metadataOnly?: boolean;
}

export interface ReflectorOptions {
  pageSize?: number;
  /** A stream that delivers nothing (not even a bookmark) for this long is presumed dead and restarted. */
  watchdogMs?: number;
  /** Server-side watch timeout is drawn from [min, 2*min) seconds, like client-go. */
  minWatchTimeoutSeconds?: number;
  backoff?: JitteredBackoff;
  /**
   * Applied to every object of an add, update or delete before it is cached or handed to handlers;
   * what it returns is what they see (the object itself, changed, or a new one). Default
   * stripManagedFields.
   */
  transform?: <T extends KubeObject>(obj: T) => T;
}

class ResourceExpiredError extends Error {}

/**
 * What the cache keeps of each object. By default managedFields are dropped (as controller-runtime's
 * TransformStripManagedFields does): no controller reads them and they are often a third of a pod.
 */
export function stripManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata?.managedFields) delete obj.metadata.managedFields;
  return obj;
}

/**
 * What a metadata-only cache keeps: the identity, labels, owners and deletion state a controller
 * needs to find and claim objects. Annotations (often a large last-applied-configuration), managed
 * fields and finalizers are dropped.
 */
export function slimMetadata<T extends KubeObject>(obj: T): T {
  const m = obj.metadata;
  if (!m) return obj;
  obj.metadata = {
    name: m.name,
    namespace: m.namespace,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    ...(m.creationTimestamp ? { creationTimestamp: m.creationTimestamp } : {}),
    ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    ...(m.labels ? { labels: m.labels } : {}),
    ...(m.ownerReferences ? { ownerReferences: m.ownerReferences } : {}),
  };
  return obj;
}

/**
 * Keeps a Store equal to the server: list, then watch from the list's resourceVersion, forever.
 * - every stream end or error restarts the watch after a jittered backoff;
 * - 410 Gone (the resourceVersion was compacted away) relists, and the relist emits the deletes
 *   that happened while we were not watching;
 * - bookmarks advance the resourceVersion so restarts rarely need a relist;
 * - a watchdog restarts a stream that has gone quiet (half-open connections).
 */
export class Reflector<T extends KubeObject> {
  private resourceVersion = '';
  private syncedFlag = false;
  private resolveSynced!: () => void;
  readonly synced: Promise<void> = new Promise((resolve) => {
    this.resolveSynced = resolve;
  });
  private resolveListAttempted!: () => void;
  /** Resolves once the first list has succeeded or failed (see lastError). */
  readonly listAttempted: Promise<void> = new Promise((resolve) => {
    this.resolveListAttempted = resolve;
  });
  /** Why the last list or watch failed (e.g. a 403); cleared once a list succeeds or a watch delivers. */
  lastError: unknown;
  /** Counts of what happened, for tests and debugging. */
  readonly stats = { lists: 0, watches: 0, gone: 0, watchdogRestarts: 0, errors: 0 };
  private readonly client: KubeClient;
  private readonly type: ResourceType<T>;
  private readonly scope: ReflectorScope;
  private readonly store: Store<T>;
  private readonly handler: EventHandler<T>;
  private readonly log: Logger;
  private readonly pageSize: number;
  private readonly watchdogMs: number;
  private readonly minWatchTimeoutSeconds: number;
  private readonly backoff: JitteredBackoff;
  private readonly transform: <O extends KubeObject>(obj: O) => O;

  constructor(
    client: KubeClient,
    type: ResourceType<T>,
    scope: ReflectorScope,
    store: Store<T>,
    handler: EventHandler<T>,
    log: Logger,
    options: ReflectorOptions = {},
  ) {
    this.client = client;
    this.type = type;
    this.scope = scope;
    this.store = store;
    this.handler = handler;
    this.log = log;
    this.pageSize = options.pageSize ?? 500;
    this.watchdogMs = options.watchdogMs ?? 150_000;
    this.minWatchTimeoutSeconds = options.minWatchTimeoutSeconds ?? 300;
    this.backoff = options.backoff ?? new JitteredBackoff();
    this.transform = options.transform ?? stripManagedFields;
  }

  get hasSynced(): boolean {
    return this.syncedFlag;
  }

  async run(signal: AbortSignal): Promise<void> {
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.listAndReplace(signal);
          needList = false;
          this.lastError = undefined;
          this.resolveListAttempted();
        }
        const started = Date.now();
        await this.watchOnce(signal);
        if (Date.now() - started > 60_000) this.backoff.reset();
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof ResourceExpiredError || isGone(err)) {
          this.stats.gone++;
          this.log.info('resourceVersion too old, relisting', { resourceVersion: this.resourceVersion });
          needList = true;
          continue;
        }
        this.stats.errors++;
        this.lastError = err;
        this.resolveListAttempted();
        const delay = this.backoff.next();
        this.log.warn('list/watch failed, retrying', {
          error: errorMessage(err),
          retryInMs: Math.round(delay),
        });
        await sleep(delay, signal);
      }
    }
  }

  private async listAndReplace(signal: AbortSignal): Promise<void> {
    this.stats.lists++;
    // Metadata-only lists hold PartialObjectMetadata items.
    const kind = this.scope.metadataOnly ? 'PartialObjectMetadata' : this.type.kind;
    const apiVersion = this.scope.metadataOnly
      ? 'meta.k8s.io/v1'
      : this.type.group
        ? `${this.type.group}/${this.type.version}`
        : this.type.version;
    const objects: T[] = [];
    let continueToken: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.client.list<T>(this.type, {
        ...this.scope,
        limit: this.pageSize,
        continue: continueToken,
        signal,
      });
      // Transformed page by page, so a relist never holds every object whole at once. An empty
      // PartialObjectMetadataList says "items": null.
      for (const item of page.items ?? []) {
        item.kind ??= kind; // list items omit kind/apiVersion; watch events carry them
        item.apiVersion ??= apiVersion;
        objects.push(this.transform(item));
      }
      continueToken = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion ?? '';
    } while (continueToken);
    const delta = this.store.replace(objects);
    this.resourceVersion = resourceVersion;
    for (const obj of delta.added) this.handler.onAdd?.(obj);
    for (const { oldObj, newObj } of delta.updated) this.handler.onUpdate?.(oldObj, newObj);
    for (const obj of delta.deleted) this.handler.onDelete?.(obj);
    if (!this.syncedFlag) {
      this.syncedFlag = true;
      this.resolveSynced();
    }
    this.log.debug('listed', { count: objects.length, resourceVersion, deleted: delta.deleted.length });
  }

  private async watchOnce(signal: AbortSignal): Promise<void> {
    this.stats.watches++;
    const watch = new AbortController();
    const stop = () => watch.abort();
    signal.addEventListener('abort', stop, { once: true });
    let lastActivity = Date.now();
    let watchdogFired = false;
    const watchdog = setInterval(
      () => {
        if (Date.now() - lastActivity > this.watchdogMs) {
          watchdogFired = true;
          this.stats.watchdogRestarts++;
          this.log.warn('watch stream quiet for too long, restarting', {
            quietMs: Date.now() - lastActivity,
          });
          watch.abort();
        }
      },
      Math.max(100, Math.min(this.watchdogMs / 2, 10_000)),
    );
    watchdog.unref();
    try {
      const timeoutSeconds = Math.floor(this.minWatchTimeoutSeconds * (1 + Math.random()));
      const events = this.client.watch<T>(this.type, {
        ...this.scope,
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds,
        signal: watch.signal,
      });
      for await (const event of events) {
        lastActivity = Date.now();
        this.lastError = undefined;
        this.apply(event);
      }
    } catch (err) {
      if (watchdogFired || (watch.signal.aborted && !signal.aborted)) return; // deliberate restart
      throw err;
    } finally {
      clearInterval(watchdog);
      signal.removeEventListener('abort', stop);
    }
  }

  private apply(event: WatchEvent<T>): void {
    // Read before the transform, which sees objects only: a bookmark or an ERROR Status is none.
    const rv = event.object.metadata?.resourceVersion;
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED': {
        const obj = this.transform(event.object);
        const old = this.store.upsert(obj);
        if (old) this.handler.onUpdate?.(old, obj);
        else this.handler.onAdd?.(obj);
        break;
      }
      case 'DELETED': {
        const obj = this.transform(event.object);
        const old = this.store.remove(objectKey(obj));
        this.handler.onDelete?.(old ?? obj);
        break;
      }
      case 'BOOKMARK':
        break;
      case 'ERROR': {
        const status = event.object as { code?: number; message?: string };
        if (status.code === 410) throw new ResourceExpiredError(status.message ?? 'resource version expired');
        throw new Error(`watch error: ${status.message ?? JSON.stringify(event.object)}`);
      }
    }
    if (rv) this.resourceVersion = rv;
  }
}
