import type { V1OwnerReference } from '@kubernetes/client-node';
import { isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/kube-client.ts';
import { controllerRefOf, type KubeObject, objectKey } from '../client/object.ts';
import { apiVersionOf, type ResourceType } from '../client/resource.ts';
import {
  absentListGuard,
  type GuardedPatchOptions,
  type JsonPatch,
  patchWithGuards,
  uidGuard,
} from './guarded-patch.ts';

/**
 * Controller ownerReferences: building them, reading them, and the adopt/release edits ReplicaSet
 * does through its ControllerRefManager, as guarded JSON Patches (see guarded-patch.ts).
 */

/** The ownerReference that makes `owner` the controller of an object (as metav1.NewControllerRef). */
export function controllerReference(owner: KubeObject, ownerType: ResourceType): V1OwnerReference {
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  if (!name || !uid)
    throw new TypeError(`a controller reference needs the owner's name and uid (${ownerType.kind})`);
  return {
    apiVersion: apiVersionOf(ownerType),
    kind: ownerType.kind,
    name,
    uid,
    controller: true,
    // The garbage collector's foreground deletion then waits for this object. Setting it requires
    // permission to update the owner's `finalizers` subresource (OwnerReferencesPermissionEnforcement).
    blockOwnerDeletion: true,
  };
}

/** Whether `owner` (matched by uid, as the garbage collector does) is the controller of `obj`. */
export function isControlledBy(obj: KubeObject, owner: KubeObject): boolean {
  const uid = owner.metadata?.uid;
  return uid !== undefined && controllerRefOf(obj)?.uid === uid;
}

/**
 * The patch that makes `owner` the controller of `obj`; undefined if it already is. Throws if another
 * object controls `obj`. The whole current list is tested, so the patch fails if anyone adopted the
 * object (or otherwise touched its ownerReferences) since it was read. An existing non-controller
 * reference to the owner is replaced, as the upstream strategic merge patch (keyed by uid) does.
 */
export function adoptPatch(
  obj: KubeObject,
  owner: KubeObject,
  ownerType: ResourceType,
): JsonPatch | undefined {
  if (isControlledBy(obj, owner)) return undefined;
  const controller = controllerRefOf(obj);
  if (controller) {
    throw new Error(
      `${objectKey(obj)} is already controlled by ${controller.kind} ${controller.name} (${controller.uid})`,
    );
  }
  const reference = controllerReference(owner, ownerType);
  const current = obj.metadata?.ownerReferences;
  if (current === undefined) {
    return [...absentListGuard(obj), { op: 'add', path: '/metadata/ownerReferences', value: [reference] }];
  }
  const existing = current.findIndex((ref) => ref.uid === reference.uid);
  return [
    ...uidGuard(obj),
    { op: 'test', path: '/metadata/ownerReferences', value: current.map((ref) => ({ ...ref })) },
    existing < 0
      ? { op: 'add', path: '/metadata/ownerReferences/-', value: reference }
      : { op: 'replace', path: `/metadata/ownerReferences/${existing}`, value: reference },
  ];
}

/**
 * The patch that removes `owner`'s reference from `obj`; undefined if there is none. Guarded by a test
 * that the entry at that index still names the owner's uid.
 */
export function releasePatch(obj: KubeObject, owner: KubeObject): JsonPatch | undefined {
  const uid = owner.metadata?.uid;
  const index = obj.metadata?.ownerReferences?.findIndex((ref) => ref.uid === uid) ?? -1;
  if (uid === undefined || index < 0) return undefined;
  return [
    ...uidGuard(obj),
    { op: 'test', path: `/metadata/ownerReferences/${index}/uid`, value: uid },
    { op: 'remove', path: `/metadata/ownerReferences/${index}` },
  ];
}

/**
 * Makes `owner` the controller of the orphan `obj`; returns the updated object. The caller decides
 * that adoption is right (the object matches the owner's selector, the owner is not being deleted:
 * check that with a fresh read of the owner, as ControllerRefManager's canAdopt does). Because that
 * decision was made on the copy it read, the default is a single attempt: if the guard fails the
 * error is thrown and the caller's next reconcile decides again on fresh data.
 */
export function adopt<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  owner: KubeObject,
  ownerType: ResourceType,
  options: GuardedPatchOptions = {},
): Promise<T> {
  return patchWithGuards(client, type, obj, (current) => adoptPatch(current, owner, ownerType), {
    attempts: 1,
    ...options,
  });
}

/**
 * Removes `owner`'s reference from `obj` (an object that no longer matches the owner's selector);
 * returns the updated object, or undefined if the object no longer exists. A concurrent change to
 * the list is retried on a fresh copy; a reference already gone is not an error.
 */
export async function release<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  owner: KubeObject,
  options: GuardedPatchOptions = {},
): Promise<T | undefined> {
  try {
    return await patchWithGuards(client, type, obj, (current) => releasePatch(current, owner), options);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
