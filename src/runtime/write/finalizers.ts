import type { KubeClient } from '../client/kube-client.ts';
import type { KubeObject } from '../client/object.ts';
import type { ResourceType } from '../client/resource.ts';
import {
  absentListGuard,
  type GuardedPatchOptions,
  type JsonPatch,
  patchWithGuards,
  uidGuard,
} from './guarded-patch.ts';

/**
 * Finalizer edits as guarded JSON Patches (see guarded-patch.ts). The patch builders are pure so the
 * exact documents can be tested; addFinalizer/removeFinalizer send them and retry on a lost race.
 */

export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return obj.metadata?.finalizers?.includes(finalizer) ?? false;
}

/**
 * The patch that appends `finalizer`, or undefined if the object has it already.
 * - list present: test the whole current list, then append to it;
 * - list absent: test uid and resourceVersion, then add the list (see absentListGuard).
 */
export function addFinalizerPatch(obj: KubeObject, finalizer: string): JsonPatch | undefined {
  if (hasFinalizer(obj, finalizer)) return undefined;
  const current = obj.metadata?.finalizers;
  if (current === undefined) {
    return [...absentListGuard(obj), { op: 'add', path: '/metadata/finalizers', value: [finalizer] }];
  }
  return [
    ...uidGuard(obj),
    { op: 'test', path: '/metadata/finalizers', value: [...current] },
    { op: 'add', path: '/metadata/finalizers/-', value: finalizer },
  ];
}

/**
 * The patch that removes every occurrence of `finalizer`, or undefined if the object does not have
 * it. Each removal of index i is guarded by a test that index i still holds `finalizer`, so entries
 * other writers add or remove elsewhere in the list are left alone unless they shift our index (the
 * test then fails and we retry). Indexes go from last to first, so earlier removals do not shift them.
 */
export function removeFinalizerPatch(obj: KubeObject, finalizer: string): JsonPatch | undefined {
  const current = obj.metadata?.finalizers ?? [];
  const indexes = current.flatMap((name, index) => (name === finalizer ? [index] : [])).reverse();
  if (indexes.length === 0) return undefined;
  return [
    ...uidGuard(obj),
    ...indexes.flatMap(
      (index): JsonPatch => [
        { op: 'test', path: `/metadata/finalizers/${index}`, value: finalizer },
        { op: 'remove', path: `/metadata/finalizers/${index}` },
      ],
    ),
  ];
}

/** Adds `finalizer` unless present; returns the updated object (or `obj` when nothing was written). */
export function addFinalizer<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  finalizer: string,
  options: GuardedPatchOptions = {},
): Promise<T> {
  return patchWithGuards(client, type, obj, (current) => addFinalizerPatch(current, finalizer), options);
}

/**
 * Removes `finalizer` if present; returns the updated object (or `obj` when nothing was written).
 * Removing the last finalizer of an object being deleted lets the deletion complete: a NotFound from
 * the retry's re-read means exactly that, and is left to the caller (usually: treat as done).
 */
export function removeFinalizer<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  finalizer: string,
  options: GuardedPatchOptions = {},
): Promise<T> {
  return patchWithGuards(client, type, obj, (current) => removeFinalizerPatch(current, finalizer), options);
}
