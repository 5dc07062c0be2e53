import type { KubeClient } from '../client/kube-client.ts';
import type { KubeObject } from '../client/object.ts';
import { type ResourceType, resourceId } from '../client/resource.ts';
import type { Logger } from '../log.ts';
import { Informer, type InformerScope } from './informer.ts';
import type { ReflectorOptions } from './reflector.ts';

export interface InformerCacheOptions {
  /** Namespaces every informer watches; empty means all. */
  namespaces?: readonly string[];
  /** Per-type server-side label selectors (by resourceId), e.g. only our own Pods. */
  labelSelectors?: Readonly<Record<string, string>>;
  reflector?: ReflectorOptions;
}

/**
 * The manager's cache: exactly one informer per resource type, shared by every controller that
 * reads or watches that type. Informers requested after start() start at once.
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

  informerFor<T extends KubeObject>(type: ResourceType): Informer<T> {
    const id = resourceId(type);
    let informer = this.informers.get(id);
    if (!informer) {
      const scope: InformerScope = {
        namespaces: this.options.namespaces ?? [],
        labelSelector: this.options.labelSelectors?.[id],
      };
      informer = new Informer<KubeObject>(this.client, type, scope, this.log, this.options.reflector);
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

  get hasSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced);
  }

  /** Which informers have not synced yet (for /readyz). */
  unsynced(): string[] {
    return [...this.informers.entries()].filter(([, i]) => !i.hasSynced).map(([id]) => id);
  }

  async stopped(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.stopped()));
  }
}
