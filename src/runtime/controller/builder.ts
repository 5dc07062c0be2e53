import type { Registry } from 'prom-client';
import { Informer } from '../cache/informer.ts';
import type { InformerCache } from '../cache/informer-cache.ts';
import type { EventHandler } from '../cache/reflector.ts';
import type { KubeClient } from '../client/kube-client.ts';
import { controllerRefOf, type KubeObject, objectKey } from '../client/object.ts';
import type { ResourceType } from '../client/resource.ts';
import { errorMessage, type Logger } from '../log.ts';
import type { ObjectWithStatus, StatusOf } from '../write/status.ts';
import { applyOwnedFields, replaceWholeStatus } from '../write/status-strategy.ts';
import { BackgroundStatusWriter, type ProgressOptions } from '../write/status-writer.ts';
import { Controller, type RunnableController } from './controller.ts';
import type { Predicate } from './predicates.ts';
import type { Reconciler } from './reconciler.ts';
import { dispatch, enqueueIf, type MapFunc, type Watch } from './watch.ts';

/** What the builder needs from the manager. */
export interface ControllerHost {
  readonly cache: InformerCache;
  readonly client: KubeClient;
  readonly registry: Registry;
  readonly log: Logger;
  addController(controller: RunnableController): void;
  /** Default worker count for a controller of this name (from configuration). */
  concurrencyFor(name: string): number;
  /** How long a stopping controller may take to finish its work (--graceful-shutdown-timeout). */
  readonly drainTimeoutMs?: number;
}

/**
 * Where events come from: a type (the cache's default informer for it) or a given informer, e.g. one
 * with a label selector of the controller's own or a metadata-only one.
 */
export type WatchSource<T extends KubeObject = KubeObject> = ResourceType<T> | Informer<T>;

/** How the controller writes the status of the objects it reconciles (see StatusWriter). */
export interface StatusOptions<T extends ObjectWithStatus> {
  /**
   * `replace` (default): this controller is the status's only writer and replaces it whole.
   * `apply`: other controllers write parts of the status too; this one owns the fields it sends
   * (server-side apply, the controller's name as field manager) and sends its observedGeneration
   * itself if it reports one.
   */
  strategy?: 'replace' | 'apply';
  progress?: ProgressOptions<StatusOf<T>>;
  /** Status writes in flight at most (default 2). */
  concurrency?: number;
  /** How long a status handed over waits before it is sent (default 20 ms, DEFAULT_STATUS_BATCH_MS). */
  batchMs?: number;
}

interface InformerWatch extends Watch {
  informer: Informer<KubeObject>;
}

function groupOf(apiVersion: string | undefined): string {
  const slash = apiVersion?.indexOf('/') ?? -1;
  return slash < 0 ? '' : apiVersion!.slice(0, slash);
}

/** Maps an owned object to its controller owner of the given kind (EnqueueRequestForOwner with OnlyControllerOwner). */
export function ownerRequest(ownerType: ResourceType): MapFunc<KubeObject> {
  return (obj) => {
    const ref = controllerRefOf(obj);
    if (!ref || ref.kind !== ownerType.kind || groupOf(ref.apiVersion) !== ownerType.group) return [];
    return [{ namespace: obj.metadata?.namespace ?? '', name: ref.name }];
  };
}

const self: MapFunc<KubeObject> = (obj) => [
  { namespace: obj.metadata?.namespace ?? '', name: obj.metadata?.name ?? '' },
];

/** `host.controller(name)`: a controller is named, then given the type it reconciles. */
export function namedController(host: ControllerHost, name: string) {
  return {
    /** The type this controller reconciles; its events enqueue the object itself. */
    for<T extends ObjectWithStatus>(
      type: ResourceType<T>,
      ...predicates: NoInfer<Predicate<T>>[]
    ): ControllerBuilder<T> {
      return new ControllerBuilder<T>(host, name, type, predicates);
    },
  };
}

/**
 * Registers a controller the way controller-runtime's builder does:
 *   host.controller('name').for(T).status({...}).owns(Child).watches(Other, map).complete(reconciler)
 */
export class ControllerBuilder<T extends ObjectWithStatus> {
  private readonly host: ControllerHost;
  private readonly name: string;
  private readonly forType: ResourceType<T>;
  private readonly forInformer: Informer<T>;
  private readonly watchList: InformerWatch[] = [];
  private readonly observers: { informer: Informer<KubeObject>; handler: EventHandler<KubeObject> }[] = [];
  private statusOptions: StatusOptions<T> | undefined;

  constructor(host: ControllerHost, name: string, forType: ResourceType<T>, predicates: Predicate<T>[]) {
    this.host = host;
    this.name = name;
    this.forType = forType;
    // Informers are created now, so caches start (and sync) before this replica is leader.
    this.forInformer = host.cache.informerFor(forType);
    this.watch(this.forInformer, self, predicates);
  }

  /** The runtime writes the reconciled objects' status; reconcilers hand it over on `ctx.status`. */
  status(options: StatusOptions<T> = {}): this {
    this.statusOptions = options;
    return this;
  }

  /** A type this controller creates; events on one enqueue its controller owner. */
  owns<U extends KubeObject>(source: WatchSource<U>, ...predicates: Predicate<U>[]): this {
    return this.watch(source, ownerRequest(this.forType), predicates);
  }

  /** Any other type, mapped to requests by a function. */
  watches<U extends KubeObject>(
    source: WatchSource<U>,
    map: MapFunc<U>,
    ...predicates: Predicate<U>[]
  ): this {
    return this.watch(source, map, predicates);
  }

  /**
   * `handler` sees every event of `source` before this controller enqueues anything for it (the
   * controller's expectations are brought up to date first), from the moment the controller is
   * registered, leader or not.
   */
  observe<U extends KubeObject>(source: Informer<U>, handler: EventHandler<U>): this {
    this.observers.push({
      informer: source as unknown as Informer<KubeObject>,
      handler: handler as EventHandler<KubeObject>,
    });
    return this;
  }

  complete(reconciler: Reconciler<T>): Controller<T> {
    const controller = new Controller<T>(
      {
        name: this.name,
        concurrency: this.host.concurrencyFor(this.name),
        drainTimeoutMs: this.host.drainTimeoutMs,
        objects: this.forInformer,
      },
      reconciler,
      this.host.registry,
      this.host.log,
    );
    let running = false;
    if (this.statusOptions) {
      const writer = this.statusWriter(this.statusOptions, controller);
      controller.useStatusWriter(writer);
      this.forInformer.addHandler({
        onUpdate: (oldObj, obj) => {
          // Someone else's edit of a status this controller alone writes: reconcile to correct it.
          if (running && writer.changedByOthers(oldObj, obj))
            for (const r of self(obj)) controller.enqueue(r);
          writer.observed(obj);
        },
        onDelete: (obj) => writer.forget(objectKey(obj)),
      });
      controller.onStop(() => writer.drain());
    }
    for (const informer of new Set([...this.watchList, ...this.observers].map((w) => w.informer))) {
      const observers = this.observers.filter((o) => o.informer === informer).map((o) => o.handler);
      const watches = this.watchList.filter((w) => w.informer === informer);
      informer.addHandler(dispatch(observers, () => (running ? watches : []), controller));
    }
    controller.onStart(() => {
      running = true;
      // What the cache holds already is new to the controller, as a late handler would see it.
      for (const watch of this.watchList) {
        for (const obj of watch.informer.list()) enqueueIf(controller, watch, obj, (p) => p.create?.(obj));
      }
    });
    this.host.addController(controller);
    return controller;
  }

  private watch<U extends KubeObject>(
    source: WatchSource<U>,
    map: MapFunc<U>,
    predicates: Predicate<U>[],
  ): this {
    const informer = source instanceof Informer ? source : this.host.cache.informerFor(source);
    this.watchList.push({
      informer: informer as unknown as Informer<KubeObject>,
      map: map as MapFunc<KubeObject>,
      predicates: predicates as Predicate[],
    });
    return this;
  }

  private statusWriter(options: StatusOptions<T>, controller: Controller<T>): BackgroundStatusWriter<T> {
    const apply = options.strategy === 'apply';
    const log = this.host.log.child({ controller: this.name });
    return new BackgroundStatusWriter<T>({
      client: this.host.client,
      type: this.forType,
      cache: this.forInformer,
      strategy: apply ? applyOwnedFields(this.name) : replaceWholeStatus,
      setObservedGeneration: !apply,
      soleWriter: !apply,
      progress: options.progress,
      concurrency: options.concurrency,
      batchMs: options.batchMs,
      signal: controller.signal,
      onError: (key, err) => {
        log.warn('status write failed, will retry', { key, error: errorMessage(err) });
        controller.retryKey(key);
      },
    });
  }
}
