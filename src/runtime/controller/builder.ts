import type { Registry } from 'prom-client';
import { Informer } from '../cache/informer.ts';
import type { InformerCache } from '../cache/informer-cache.ts';
import type { EventHandler } from '../cache/reflector.ts';
import { controllerRefOf, type KubeObject } from '../client/object.ts';
import type { ResourceType } from '../client/resource.ts';
import type { Logger } from '../log.ts';
import type { RateLimiter } from '../queue/index.ts';
import { Controller } from './controller.ts';
import type { Predicate } from './predicates.ts';
import type { Reconciler, Request } from './reconciler.ts';

/** What the builder needs from the manager. */
export interface ControllerHost {
  readonly cache: InformerCache;
  readonly registry: Registry;
  readonly log: Logger;
  addController(controller: Controller): void;
  /** Default worker count for a controller of this name (from configuration). */
  concurrencyFor(name: string): number;
}

export type MapFunc<T extends KubeObject> = (obj: T) => Request[];

/**
 * Where events come from: a type (the cache's default informer for it) or a given informer, e.g. one
 * with a label selector of the controller's own or a metadata-only one.
 */
export type WatchSource<T extends KubeObject = KubeObject> = ResourceType | Informer<T>;

interface Watch {
  source: WatchSource;
  map: MapFunc<KubeObject>;
  predicates: Predicate[];
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

/**
 * Registers a controller the way controller-runtime's builder does:
 *   host.controller('name').for(T).owns(Child).watches(Other, map).complete(reconciler)
 */
export class ControllerBuilder {
  private readonly host: ControllerHost;
  private readonly name: string;
  private forType: ResourceType | undefined;
  private forPredicates: Predicate[] = [];
  private readonly watchList: Watch[] = [];
  private concurrency: number | undefined;
  private rateLimiter: RateLimiter<string> | undefined;

  constructor(host: ControllerHost, name: string) {
    this.host = host;
    this.name = name;
  }

  /** The type this controller reconciles; its events enqueue the object itself. */
  for(type: ResourceType, ...predicates: Predicate[]): this {
    if (this.forType) throw new Error(`controller ${this.name}: for() may be called only once`);
    this.forType = type;
    this.forPredicates = predicates;
    return this;
  }

  /** A type this controller creates; events on one enqueue its controller owner. */
  owns<T extends KubeObject>(source: WatchSource<T>, ...predicates: Predicate<T>[]): this {
    if (!this.forType) throw new Error(`controller ${this.name}: call for() before owns()`);
    this.watchList.push({
      source: source as WatchSource,
      map: ownerRequest(this.forType),
      predicates: predicates as Predicate[],
    });
    return this;
  }

  /** Any other type, mapped to requests by a function. */
  watches<T extends KubeObject>(
    source: WatchSource<T>,
    map: MapFunc<T>,
    ...predicates: Predicate<T>[]
  ): this {
    this.watchList.push({
      source: source as WatchSource,
      map: map as MapFunc<KubeObject>,
      predicates: predicates as Predicate[],
    });
    return this;
  }

  withConcurrency(workers: number): this {
    this.concurrency = workers;
    return this;
  }

  withRateLimiter(rateLimiter: RateLimiter<string>): this {
    this.rateLimiter = rateLimiter;
    return this;
  }

  complete(reconciler: Reconciler): Controller {
    const forType = this.forType;
    if (!forType) throw new Error(`controller ${this.name}: for() is required`);
    const controller = new Controller(
      {
        name: this.name,
        concurrency: this.concurrency ?? this.host.concurrencyFor(this.name),
        rateLimiter: this.rateLimiter,
      },
      reconciler,
      this.host.registry,
      this.host.log,
    );
    const self: MapFunc<KubeObject> = (obj) => [
      { namespace: obj.metadata?.namespace ?? '', name: obj.metadata?.name ?? '' },
    ];
    const sources: Watch[] = [
      { source: forType, map: self, predicates: this.forPredicates },
      ...this.watchList,
    ];
    // Informers are created now, so caches start (and sync) before this replica is leader.
    const informers = sources.map(({ source }) =>
      source instanceof Informer ? source : this.host.cache.informerFor(source),
    );
    controller.onStart(() => {
      sources.forEach((source, i) => {
        informers[i]!.addHandler(enqueueHandler(controller, source));
      });
    });
    this.host.addController(controller);
    return controller;
  }
}

function enqueueHandler(controller: Controller, source: Watch): EventHandler<KubeObject> {
  const enqueueAll = (obj: KubeObject) => {
    for (const request of source.map(obj)) if (request.name) controller.enqueue(request);
  };
  return {
    onAdd: (obj) => {
      if (source.predicates.every((p) => p.create?.(obj) ?? true)) enqueueAll(obj);
    },
    onUpdate: (oldObj, newObj) => {
      if (!source.predicates.every((p) => p.update?.(oldObj, newObj) ?? true)) return;
      // Both sides: an object that changed owner must wake the old owner too.
      enqueueAll(oldObj);
      enqueueAll(newObj);
    },
    onDelete: (obj) => {
      if (source.predicates.every((p) => p.delete?.(obj) ?? true)) enqueueAll(obj);
    },
  };
}
