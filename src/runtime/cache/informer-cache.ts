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

/** The cache's configuration, passed in by whoever assembles the manager (main, tests). */
export interface CacheOptions {
  /**
   * Default label selector per type (keyed by resourceId) for informers asked for without one,
   * e.g. only the Jobs the operator made. Types not listed are cached whole.
   */
  byObject?: Readonly<Record<string, { labelSelector: string }>>;
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
 * informer with its own list and watch. Informers requested after start() start at once.
 */
export class InformerCache {
  private readonly informers = new Map<string, Informer<KubeObject>>();
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
    const labelSelector = selection.labelSelector ?? this.options.byObject?.[typeId]?.labelSelector ?? '';
    const metadataOnly = selection.metadataOnly ?? false;
    const id = informerId(typeId, labelSelector, metadataOnly);
    let informer = this.informers.get(id);
    if (!informer) {
      const scope: InformerScope = {
        namespaces: this.options.namespaces ?? [],
        labelSelector: labelSelector || undefined,
        metadataOnly,
      };
      const reflector: ReflectorOptions = metadataOnly
        ? { ...this.options.reflector, transform: composeTransform(this.options.reflector, slimMetadata) }
        : (this.options.reflector ?? {});
      informer = new Informer<KubeObject>(this.client, type, scope, this.log, reflector);
      this.informers.set(id, informer);
      if (this.signal) informer.start(this.signal);
    }
    return informer as unknown as Informer<T>;
  }

  start(signal: AbortSignal): void {
    this.signal = signal;
    for (const informer of this.informers.values()) informer.start(signal);
  }

  async waitForSync(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync()));
  }

  /** Which informers have not synced yet (for /readyz). */
  unsynced(): string[] {
    return [...this.informers.entries()].filter(([, i]) => !i.hasSynced).map(([id]) => id);
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
  then: <T extends KubeObject>(obj: T) => T,
): <T extends KubeObject>(obj: T) => T {
  const first = options?.transform ?? stripManagedFields;
  return <T extends KubeObject>(obj: T) => then(first(obj));
}
