import type { EventHandler } from '../cache/reflector.ts';
import type { KubeObject } from '../client/object.ts';
import type { Predicate } from './predicates.ts';
import { type Request, requestKey } from './reconciler.ts';

/** Which objects of the reconciled type an event of another object concerns. */
export type MapFunc<T extends KubeObject> = (obj: T) => Request[];

/** One event source of a controller: its events pass the predicates, then enqueue what `map` returns. */
export interface Watch<T extends KubeObject = KubeObject> {
  map: MapFunc<T>;
  predicates: Predicate<T>[];
}

export interface Enqueuer {
  enqueue(request: Request): void;
}

export function enqueueIf<T extends KubeObject>(
  controller: Enqueuer,
  watch: Watch<T>,
  obj: T,
  passes: (p: Predicate<T>) => boolean | undefined,
): void {
  if (!watch.predicates.every((p) => passes(p) ?? true)) return;
  for (const request of watch.map(obj)) if (request.name) controller.enqueue(request);
}

/**
 * One handler per informer: the observers first, then the controller's enqueues for `watches()`
 * (empty while the controller does not run), in that order.
 */
export function dispatch<T extends KubeObject>(
  observers: EventHandler<T>[],
  watches: () => Watch<T>[],
  controller: Enqueuer,
): EventHandler<T> {
  return {
    onAdd: (obj) => {
      for (const o of observers) o.onAdd?.(obj);
      for (const w of watches()) enqueueIf(controller, w, obj, (p) => p.create?.(obj));
    },
    onUpdate: (oldObj, newObj) => {
      for (const o of observers) o.onUpdate?.(oldObj, newObj);
      for (const w of watches()) {
        if (!w.predicates.every((p) => p.update?.(oldObj, newObj) ?? true)) continue;
        // Both sides: an object that changed owner must wake the old owner too. Each request once:
        // the queue hands an item to an idle worker at once, so a second add of the same request
        // would be a second reconcile (controller-runtime's owner handler dedupes the same way).
        const requests = new Map<string, Request>();
        for (const request of [...w.map(oldObj), ...w.map(newObj)]) {
          if (request.name) requests.set(requestKey(request), request);
        }
        for (const request of requests.values()) controller.enqueue(request);
      }
    },
    onDelete: (obj) => {
      for (const o of observers) o.onDelete?.(obj);
      for (const w of watches()) enqueueIf(controller, w, obj, (p) => p.delete?.(obj));
    },
  };
}
