import { isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/kube-client.ts';
import { isBeingDeleted } from '../client/object.ts';
import type { ResourceType } from '../client/resource.ts';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../write/finalizers.ts';
import type { ObjectWithStatus } from '../write/status.ts';
import type { Result } from './reconciler.ts';

/** What a cleanup step found: done (the finalizer goes), or not yet (and when to look again). */
export type Cleanup = { done: true } | { done: false; result?: Result };

/** The two halves of a reconcile that holds a finalizer on its object (kube-rs's Event::Apply and Event::Cleanup). */
export interface FinalizerSteps<T> {
  /** The object lives and holds the finalizer: make the world match it. */
  apply(obj: T): Promise<Result | undefined>;
  /** The object is being deleted and still holds the finalizer: undo what apply did. */
  cleanup(obj: T): Promise<Cleanup>;
  /** Called once the finalizer was added. */
  added?(obj: T): void;
  /** Called once the finalizer was removed (or the object was gone already). */
  removed?(obj: T): void;
}

/**
 * A reconcile of an object that must not go before its controller has cleaned up after it, as
 * kube-rs's `finalizer()`: a live object gets `name` first (so it never goes while anything apply
 * makes exists) and then `apply`; an object being deleted gets `cleanup`, and loses `name` only once
 * cleanup says it is done. An object being deleted without `name` is left alone. Unlike kube-rs,
 * apply runs right after the finalizer is added, in the same reconcile. The finalizer is added and
 * removed with guarded patches (write/finalizers.ts); an object that is gone meanwhile (NotFound)
 * ends the reconcile. The object apply gets after an add keeps the status `obj` had: a metadata
 * patch does not change it, and `obj` may carry the status last handed over (ctx.object).
 */
export async function finalizer<T extends ObjectWithStatus>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  name: string,
  steps: FinalizerSteps<T>,
  signal?: AbortSignal,
): Promise<Result | undefined> {
  if (isBeingDeleted(obj)) {
    if (!hasFinalizer(obj, name)) return undefined;
    const cleanup = await steps.cleanup(obj);
    if (!cleanup.done) return cleanup.result;
    try {
      await removeFinalizer(client, type, obj, name, { signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    steps.removed?.(obj);
    return undefined;
  }
  let current = obj;
  if (!hasFinalizer(obj, name)) {
    try {
      current = { ...(await addFinalizer(client, type, obj, name, { signal })), status: obj.status };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    steps.added?.(current);
  }
  return steps.apply(current);
}
