import { isDeepStrictEqual } from 'node:util';
import type { KubeClient } from '../client/kube-client.ts';
import type { KubeObject } from '../client/object.ts';
import type { ResourceType } from '../client/resource.ts';
import { replacementMergePatch, toJsonValue } from './merge-patch.ts';
import { type RetryOptions, retryOnConflict } from './retry.ts';

/** Any object with a status, e.g. BasicDeployment. */
export type ObjectWithStatus = KubeObject & { status?: object };
export type StatusOf<T extends ObjectWithStatus> = NonNullable<T['status']>;

export interface StatusWriteResult<T> {
  /** False when the computed status equalled the current one and nothing was sent. */
  changed: boolean;
  /** The server's copy after the write, or the object passed in when nothing was written. */
  object: T;
}

export interface StatusWriteOptions {
  fieldManager?: string;
  signal?: AbortSignal;
}

/**
 * The status the controller wants, as JSON (undefined members dropped), with observedGeneration set
 * to the generation it was computed from: kstatus and `kubectl wait` use it to know the status is
 * about the current spec.
 */
export function desiredStatus<T extends ObjectWithStatus>(
  obj: T,
  computeStatus: (obj: T) => StatusOf<T>,
): StatusOf<T> {
  const computed = toJsonValue(computeStatus(obj));
  const generation = obj.metadata?.generation;
  return (
    generation === undefined ? computed : { ...computed, observedGeneration: generation }
  ) as StatusOf<T>;
}

/** Whether writing `next` would change anything, comparing as JSON. */
export function statusChanged(current: object | undefined, next: object): boolean {
  return !isDeepStrictEqual(toJsonValue(current ?? {}), next);
}

/** The body of the merge patch to /status that replaces `current` by `next`. */
export function statusMergePatch(current: object | undefined, next: object): { status: unknown } {
  return { status: replacementMergePatch(toJsonValue(current ?? {}), next) };
}

/**
 * The JSON Patch that sets the whole status to `next`, guarded by a `test` of the object's uid: a
 * status computed for an object that has since been deleted and recreated under the same name (the
 * cache had not caught up) must not land on its successor.
 */
export function statusReplacePatch(obj: KubeObject, next: object): Array<Record<string, unknown>> {
  return [
    { op: 'test', path: '/metadata/uid', value: obj.metadata?.uid },
    { op: 'add', path: '/status', value: next },
  ];
}

/**
 * Writes the status subresource, or nothing at all when the computed status equals the current one
 * (a no-op write would still bump resourceVersion and wake every watcher, including this controller:
 * a reconcile loop that never settles).
 *
 * The write is a JSON Patch that replaces the whole status, guarded by the uid (see
 * statusReplacePatch), without resourceVersion and without a conflict retry: the /status endpoint
 * only takes `status` from the body, so the patch cannot clobber a concurrent spec or metadata
 * change, and the calling controller is the single writer of this status. A PUT would instead fail
 * with 409 whenever anything else (a label, a finalizer) changed since our cache read, for no benefit.
 * Controllers that share a status with another writer use replaceStatus.
 */
export async function updateStatus<T extends ObjectWithStatus>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  computeStatus: (obj: T) => StatusOf<T>,
  options: StatusWriteOptions = {},
): Promise<StatusWriteResult<T>> {
  const next = desiredStatus(obj, computeStatus);
  if (!statusChanged(obj.status, next)) return { changed: false, object: obj };
  return { changed: true, object: await patchWholeStatus(client, type, obj, next, options) };
}

/** Sends statusReplacePatch(obj, next) to the status subresource, in the client's low-priority lane. */
export function patchWholeStatus<T extends ObjectWithStatus>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  next: object,
  options: StatusWriteOptions = {},
): Promise<T> {
  return client.patch<T>(type, {
    namespace: obj.metadata?.namespace,
    name: obj.metadata?.name ?? '',
    patchType: 'json',
    body: statusReplacePatch(obj, next),
    subresource: 'status',
    fieldManager: options.fieldManager,
    signal: options.signal,
    priority: 'low',
  });
}

/**
 * The optimistic-concurrency variant: PUT /status carrying metadata.resourceVersion, so the write
 * replaces the status exactly and fails with 409 if the object changed since it was read. On a
 * conflict it re-reads the object from the API server, recomputes and tries again (retryOnConflict).
 * computeStatus may therefore run more than once and must not have side effects.
 */
export async function replaceStatus<T extends ObjectWithStatus>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  computeStatus: (obj: T) => StatusOf<T>,
  options: StatusWriteOptions & { retry?: RetryOptions } = {},
): Promise<StatusWriteResult<T>> {
  const namespace = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  return retryOnConflict(
    async (attempt) => {
      const current = attempt === 1 ? obj : await client.get<T>(type, namespace, name, options.signal);
      const next = desiredStatus(current, computeStatus);
      if (!statusChanged(current.status, next)) return { changed: false, object: current };
      const object = await client.updateStatus<T>(
        type,
        { ...current, status: next },
        { fieldManager: options.fieldManager, signal: options.signal },
      );
      return { changed: true, object };
    },
    { signal: options.signal, ...options.retry },
  );
}
