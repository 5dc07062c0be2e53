import type { V1LabelSelector } from '@kubernetes/client-node';
import type { KubeClient } from '../client/kube-client.ts';
import type { KubeObject } from '../client/object.ts';
import type { ResourceType } from '../client/resource.ts';
import { type Labels, selectorMatches } from '../labels.ts';
import type { Logger } from '../log.ts';
import { type EventHandler, Reflector, type ReflectorOptions } from './reflector.ts';
import { LABEL_INDEX, NAMESPACE_INDEX, OWNER_UID_INDEX, Store } from './store.ts';

export interface InformerScope {
  /** Namespaces to watch; empty means all namespaces. */
  namespaces: readonly string[];
  /** Server-side label selector: only matching objects are cached (memory follows what we manage). */
  labelSelector?: string;
  /** Cache metadata only (PartialObjectMetadata objects), for types where the full objects are not needed. */
  metadataOnly?: boolean;
}

/**
 * A shared informer of one resource type and scope: reflectors (one per watched namespace) feed stores, and
 * every registered handler sees every change. Reads never go to the API server.
 */
export class Informer<T extends KubeObject> {
  private readonly parts: Array<{ namespace: string; store: Store<T>; reflector: Reflector<T> }>;
  private readonly handlers: EventHandler<T>[] = [];
  private running: Promise<unknown> | undefined;

  constructor(
    client: KubeClient,
    type: ResourceType<T>,
    scope: InformerScope,
    log: Logger,
    options: ReflectorOptions = {},
  ) {
    const namespaces = type.namespaced && scope.namespaces.length > 0 ? scope.namespaces : [''];
    const fanOut: EventHandler<T> = {
      onAdd: (obj) => {
        for (const h of this.handlers) h.onAdd?.(obj);
      },
      onUpdate: (oldObj, newObj) => {
        for (const h of this.handlers) h.onUpdate?.(oldObj, newObj);
      },
      onDelete: (obj) => {
        for (const h of this.handlers) h.onDelete?.(obj);
      },
    };
    this.parts = namespaces.map((namespace) => {
      const store = new Store<T>();
      const reflectorLog = log.child({ resource: type.plural, namespace: namespace || undefined });
      const reflector = new Reflector<T>(
        client,
        type,
        {
          namespace: namespace || undefined,
          labelSelector: scope.labelSelector,
          metadataOnly: scope.metadataOnly,
        },
        store,
        fanOut,
        reflectorLog,
        options,
      );
      return { namespace, store, reflector };
    });
  }

  addHandler(handler: EventHandler<T>): void {
    this.handlers.push(handler);
    // A late handler still learns about everything already cached, as with client-go.
    if (this.hasSynced) for (const obj of this.list()) handler.onAdd?.(obj);
  }

  start(signal: AbortSignal): void {
    this.running ??= Promise.all(this.parts.map((p) => p.reflector.run(signal)));
  }

  get hasSynced(): boolean {
    return this.parts.every((p) => p.reflector.hasSynced);
  }

  waitForSync(): Promise<void> {
    return Promise.all(this.parts.map((p) => p.reflector.synced)).then(() => undefined);
  }

  /**
   * Resolves once every reflector has tried its first list, whether it succeeded (hasSynced) or not
   * (lastError says why): an informer made at run time for a kind the operator may not be allowed
   * to list answers here instead of never syncing.
   */
  listAttempted(): Promise<void> {
    return Promise.all(this.parts.map((p) => p.reflector.listAttempted)).then(() => undefined);
  }

  /** Why a reflector's last list or watch failed, while it has not recovered; undefined otherwise. */
  get lastError(): unknown {
    return this.parts.find((p) => p.reflector.lastError !== undefined)?.reflector.lastError;
  }

  /** Resolves when every reflector loop has ended (after the start signal aborts). */
  async stopped(): Promise<void> {
    await this.running;
  }

  get reflectors(): Reflector<T>[] {
    return this.parts.map((p) => p.reflector);
  }

  private storesFor(namespace: string | undefined): Store<T>[] {
    if (!namespace || this.parts.length === 1) return this.parts.map((p) => p.store);
    return this.parts.filter((p) => p.namespace === namespace).map((p) => p.store);
  }

  get(namespace: string | undefined, name: string): T | undefined {
    const key = namespace ? `${namespace}/${name}` : name;
    for (const store of this.storesFor(namespace)) {
      const obj = store.get(key);
      if (obj) return obj;
    }
    return undefined;
  }

  list(options: { namespace?: string; labels?: Labels; selector?: V1LabelSelector } = {}): T[] {
    const out: T[] = [];
    for (const store of this.storesFor(options.namespace)) {
      const firstLabel = Object.entries(options.labels ?? options.selector?.matchLabels ?? {})[0];
      const candidates = firstLabel
        ? store.byIndex(LABEL_INDEX, `${firstLabel[0]}=${firstLabel[1]}`)
        : options.namespace
          ? store.byIndex(NAMESPACE_INDEX, options.namespace)
          : store.list();
      for (const obj of candidates) {
        if (options.namespace && obj.metadata?.namespace !== options.namespace) continue;
        if (options.labels && !selectorMatches({ matchLabels: { ...options.labels } }, obj.metadata?.labels))
          continue;
        if (options.selector && !selectorMatches(options.selector, obj.metadata?.labels)) continue;
        out.push(obj);
      }
    }
    return out;
  }

  /** Objects with an ownerReference to this UID. */
  byOwner(ownerUid: string): T[] {
    return this.parts.flatMap((p) => p.store.byIndex(OWNER_UID_INDEX, ownerUid));
  }
}
