import type { KubeClient } from '../client/kube-client.ts';
import type { KubeObject } from '../client/object.ts';
import { type ResourceType, resourceId } from '../client/resource.ts';
import type { Logger } from '../log.ts';
import { Informer, type InformerScope } from './informer.ts';
import { type ReflectorOptions, slimMetadata, stripManagedFields } from './reflector.ts';

/** Which objects of one type an informer caches (controller-runtime's cache.ByObject). */
export interface InformerSelection {
  /**
   * Server-side label selector: only matching objects are listed, watched and cached. Undefined
   * means the cache's default for the type (`byObject`); '' means every object.
   */
  labelSelector?: string;
  /** Cache metadata only (PartialObjectMetadata with labels, owners and deletion state). */
  metadataOnly?: boolean;
}

/** What the cache does with the objects of one type (controller-runtime's cache.ByObject). */
export interface ByObject {
  /** Default label selector for informers of the type asked for without one. */
  labelSelector?: string;
  /**
   * What the cache keeps of each object of the type, applied after managedFields are stripped:
   * readers and event handlers see what it returns. Not applied by metadata-only informers, which
   * keep slimMetadata's fields.
   */
  transform?: (obj: KubeObject) => KubeObject;
}

/** The cache's configuration, passed in by whoever assembles the manager (main, tests). */
export interface CacheOptions {
  /**
   * Per type (keyed by resourceId): a default label selector for informers asked for without one
   * (e.g. only the Jobs the operator made) and a transform. Types not listed are cached whole.
   */
  byObject?: Readonly<Record<string, ByObject>>;
}

export interface InformerCacheOptions extends CacheOptions {
  /** Namespaces every informer watches; empty means all. */
  namespaces?: readonly string[];
  reflector?: ReflectorOptions;
}

/**
 * The manager's cache: one informer per resource type and selection (label selector, full objects or
 * metadata only), shared by every controller that reads or watches it. Two controllers asking for
 * the same type with the same selection share one informer; a different selection is a second
 * informer with its own list and watch. Informers requested after start() start at once, and are not
 * waited for by waitForSync() and unsynced().
 */
export class InformerCache {
  private readonly informers = new Map<string, Informer<KubeObject>>();
  /**
   * Informers first asked for after start(): kinds a reconciler learns about at run time (a provider
   * kind named by a reference). Their reconciler waits for them itself (Informer.listAttempted); a
   * kind the operator may not list must hold neither /readyz nor the start of the controllers.
   */
  private readonly startedLate = new Set<string>();
  private readonly client: KubeClient;
  private readonly log: Logger;
  private readonly options: InformerCacheOptions;
  private signal: AbortSignal | undefined;

  constructor(client: KubeClient, log: Logger, options: InformerCacheOptions = {}) {
    this.client = client;
    this.log = log.child({ component: 'cache' });
    this.options = options;
  }

  /**
   * The informer for `type` and `selection`. With `metadataOnly` the objects are PartialObjectMetadata
   * (apiVersion meta.k8s.io/v1, kind PartialObjectMetadata, slimmed metadata), whatever T says.
   */
  informerFor<T extends KubeObject>(type: ResourceType<T>, selection: InformerSelection = {}): Informer<T> {
    const typeId = resourceId(type);
    const byObject = this.options.byObject?.[typeId];
    const labelSelector = selection.labelSelector ?? byObject?.labelSelector ?? '';
    const metadataOnly = selection.metadataOnly ?? false;
    const id = informerId(typeId, labelSelector, metadataOnly);
    let informer = this.informers.get(id);
    if (!informer) {
      const scope: InformerScope = {
        namespaces: this.options.namespaces ?? [],
        labelSelector: labelSelector || undefined,
        metadataOnly,
      };
      const then = metadataOnly ? slimMetadata : byObject?.transform;
      const reflector: ReflectorOptions = then
        ? { ...this.options.reflector, transform: composeTransform(this.options.reflector, then) }
        : (this.options.reflector ?? {});
      informer = new Informer<KubeObject>(this.client, type, scope, this.log, reflector);
      this.informers.set(id, informer);
      if (this.signal) {
        this.startedLate.add(id);
        informer.start(this.signal);
      }
    }
    return informer as unknown as Informer<T>;
  }

  start(signal: AbortSignal): void {
    this.signal = signal;
    for (const informer of this.informers.values()) informer.start(signal);
  }

  /** Resolves once every informer asked for before start() has synced. */
  async waitForSync(): Promise<void> {
    await Promise.all(this.startupInformers().map(([, i]) => i.waitForSync()));
  }

  /** Which informers asked for before start() have not synced yet (for /readyz). */
  unsynced(): string[] {
    return this.startupInformers()
      .filter(([, i]) => !i.hasSynced)
      .map(([id]) => id);
  }

  private startupInformers(): Array<[string, Informer<KubeObject>]> {
    return [...this.informers.entries()].filter(([id]) => !this.startedLate.has(id));
  }

  async stopped(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.stopped()));
  }
}

/** "pods.v1.core", "pods.v1.core[app=x]", "pods.v1.core[!x](metadata)". */
function informerId(typeId: string, labelSelector: string, metadataOnly: boolean): string {
  return `${typeId}${labelSelector ? `[${labelSelector}]` : ''}${metadataOnly ? '(metadata)' : ''}`;
}

/** The configured transform (default stripManagedFields), then `then`. */
function composeTransform(
  options: ReflectorOptions | undefined,
  then: (obj: KubeObject) => KubeObject,
): <T extends KubeObject>(obj: T) => T {
  const first = options?.transform ?? stripManagedFields;
  // `then` keeps an object of the informer's type, with fewer fields.
  return <T extends KubeObject>(obj: T) => then(first(obj)) as T;
}
