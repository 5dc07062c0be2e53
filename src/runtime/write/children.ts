import { isAlreadyExists, isForbidden, isInvalid, isNotFound } from '../client/errors.ts';
import type { DeleteOptions, KubeClient } from '../client/kube-client.ts';
import { isBeingDeleted, type KubeObject } from '../client/object.ts';
import { CoreTypes, type ResourceType } from '../client/resource.ts';
import { isControlledBy } from './owner-refs.ts';

/**
 * The objects a controller makes and keeps (its children): made once under a fixed name, told from a
 * namesake by the uid of their controller reference alone, deleted only by uid.
 */

/** What holds a child's name once ensureChild is done. */
export type Child<T> =
  /** Made now. */
  | { kind: 'created'; obj: T }
  /** There already, controlled by the owner (its uid): the cache had not caught up. */
  | { kind: 'ours'; obj: T }
  /** There already, and not the owner's: someone else's, or made for an earlier owner of its name. */
  | { kind: 'foreign'; obj: T }
  /** There when the create came, gone when it was read: look again later. */
  | { kind: 'absent' }
  /** Refused by admission (a quota, Pod Security, a webhook) or invalid (403, 422): a person has to act. */
  | { kind: 'refused'; error: unknown };

/** Creates `obj`; undefined when its name is taken (AlreadyExists). Other errors are thrown. */
export async function createIfAbsent<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  signal?: AbortSignal,
): Promise<T | undefined> {
  try {
    return await client.create<T>(type, obj, { signal });
  } catch (err) {
    if (isAlreadyExists(err)) return undefined;
    throw err;
  }
}

/**
 * Creates `desired`, a child of `owner` under a fixed name, or sorts out what holds that name: on
 * AlreadyExists it is read live once (the cache may hold only objects with the controller's label,
 * so a namesake of someone else's is invisible to it) and is `ours` only if `owner`'s uid controls
 * it. What to do with a foreign or absent one is the caller's decision. Errors of the live read, and
 * of the create other than a refusal, are thrown.
 */
export async function ensureChild<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType<T>,
  desired: T,
  owner: KubeObject,
  signal?: AbortSignal,
): Promise<Child<T>> {
  let created: T | undefined;
  try {
    created = await createIfAbsent(client, type, desired, signal);
  } catch (err) {
    if (isForbidden(err) || isInvalid(err)) return { kind: 'refused', error: err };
    throw err;
  }
  if (created) return { kind: 'created', obj: created };
  const live = await getOrUndefined(
    client,
    type,
    desired.metadata?.namespace,
    desired.metadata?.name ?? '',
    signal,
  );
  if (!live) return { kind: 'absent' };
  return { kind: isControlledBy(live, owner) ? 'ours' : 'foreign', obj: live };
}

/** The object as the API server has it now; undefined when there is none (NotFound). */
export async function getOrUndefined<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType<T>,
  namespace: string | undefined,
  name: string,
  signal?: AbortSignal,
): Promise<T | undefined> {
  try {
    return await client.get<T>(type, namespace, name, signal);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Deletes `obj`, this very object (a uid precondition: never a namesake made since it was read).
 * True when deleted; false when it was gone already (NotFound). A namesake in its place (409
 * Conflict) and other errors are thrown.
 */
export async function deleteIfPresent(
  client: KubeClient,
  type: ResourceType,
  obj: KubeObject,
  options: Pick<DeleteOptions, 'propagationPolicy' | 'signal'> = {},
): Promise<boolean> {
  try {
    await client.delete(type, obj.metadata?.namespace, obj.metadata?.name ?? '', {
      ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}),
      preconditions: { uid: obj.metadata?.uid },
      signal: options.signal,
    });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/**
 * Deletes the pods of a finished Job, whose outcome the caller has recorded (the Job stays, as the
 * record). The PVC protection controller counts every scheduled pod that names a claim as a user of
 * it, finished or not, so these pods would otherwise keep their claims from ever being deleted. Pods
 * already being deleted are left alone.
 */
export async function releaseFinishedJobPods(
  client: KubeClient,
  pods: readonly KubeObject[],
  signal?: AbortSignal,
): Promise<void> {
  for (const pod of pods) {
    if (!isBeingDeleted(pod)) {
      await deleteIfPresent(client, CoreTypes.Pod, pod, { propagationPolicy: 'Background', signal });
    }
  }
}
