import type { Informer } from '../cache/informer.ts';
import type { InformerSelection } from '../cache/informer-cache.ts';
import type { KubeObject } from '../client/object.ts';
import { type ResourceType, resourceId } from '../client/resource.ts';
import type { Predicate } from './predicates.ts';
import type { MapFunc } from './watch.ts';

/** Where informers come from: the manager's cache (shared with every controller), or a test's. */
export interface InformerSource {
  informerFor<T extends KubeObject>(type: ResourceType<T>, selection?: InformerSelection): Informer<T>;
}

/** A controller that takes event sources at run time (Controller.watch). */
export interface WatchTarget {
  watch<U extends KubeObject>(informer: Informer<U>, map: MapFunc<U>, ...predicates: Predicate<U>[]): void;
}

/**
 * Informers, and a controller's watches on them, for kinds the controller learns about only at run
 * time: the kinds its objects reference (Cluster API's external.ObjectTracker). The first
 * informerFor(type) of a kind asks the source for its informer (one per kind, shared with anyone
 * else caching it; it starts at once) and adds one watch to the controller that maps the kind's
 * events with `map`; later calls return the same informer. Objects are whatever the server sends
 * (`Unstructured` for a kind without types), read by field path.
 */
export class KindWatches<T extends KubeObject> {
  readonly #source: InformerSource;
  readonly #map: MapFunc<T>;
  readonly #informers = new Map<string, Informer<T>>();
  #target: WatchTarget | undefined;

  constructor(source: InformerSource, map: MapFunc<T>) {
    this.#source = source;
    this.#map = map;
  }

  /** The controller the watches go to, once the builder has made it; kinds tracked so far are added. */
  bind(target: WatchTarget): void {
    if (this.#target) throw new Error('KindWatches is bound to a controller already');
    this.#target = target;
    for (const informer of this.#informers.values()) target.watch(informer, this.#map);
  }

  /** The informer of `type`, watched by the controller from the first call on. */
  informerFor(type: ResourceType<T>): Informer<T> {
    const id = resourceId(type);
    let informer = this.#informers.get(id);
    if (!informer) {
      informer = this.#source.informerFor(type);
      this.#informers.set(id, informer);
      this.#target?.watch(informer, this.#map);
    }
    return informer;
  }
}
