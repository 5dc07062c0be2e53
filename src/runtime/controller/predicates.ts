import { controllerRefOf, type KubeObject } from '../client/object.ts';

/** Filters events before they reach the queue (controller-runtime's predicate.Funcs). */
export interface Predicate<T extends KubeObject = KubeObject> {
  create?(obj: T): boolean;
  update?(oldObj: T, newObj: T): boolean;
  delete?(obj: T): boolean;
}

/** Only spec changes (metadata.generation) pass on update; status-only writes are ignored. */
export const generationChanged: Predicate = {
  update: (oldObj, newObj) => oldObj.metadata?.generation !== newObj.metadata?.generation,
};

export const labelsChanged: Predicate = {
  update: (oldObj, newObj) =>
    JSON.stringify(oldObj.metadata?.labels ?? {}) !== JSON.stringify(newObj.metadata?.labels ?? {}),
};

/** The controller ownerReference now names another object, or none (or one where there was none). */
export const controllerChanged: Predicate = {
  update: (oldObj, newObj) => controllerRefOf(oldObj)?.uid !== controllerRefOf(newObj)?.uid,
};

export const ownerReferencesChanged: Predicate = {
  update: (oldObj, newObj) =>
    JSON.stringify(oldObj.metadata?.ownerReferences ?? []) !==
    JSON.stringify(newObj.metadata?.ownerReferences ?? []),
};

/** The object got (or lost) a deletionTimestamp. */
export const deletionChanged: Predicate = {
  update: (oldObj, newObj) =>
    (oldObj.metadata?.deletionTimestamp == null) !== (newObj.metadata?.deletionTimestamp == null),
};

export const annotationsChanged: Predicate = {
  update: (oldObj, newObj) =>
    JSON.stringify(oldObj.metadata?.annotations ?? {}) !== JSON.stringify(newObj.metadata?.annotations ?? {}),
};

export function any<T extends KubeObject>(...predicates: Predicate<T>[]): Predicate<T> {
  return {
    create: (obj) => predicates.some((p) => p.create?.(obj) ?? true),
    update: (o, n) => predicates.some((p) => p.update?.(o, n) ?? true),
    delete: (obj) => predicates.some((p) => p.delete?.(obj) ?? true),
  };
}
