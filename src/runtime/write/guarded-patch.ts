import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Operation } from 'fast-json-patch';
import { ApiError, isConflict, isPatchTestFailed } from '../client/errors.ts';
import type { KubeClient } from '../client/kube-client.ts';
import { type KubeObject, objectKey, uidOf } from '../client/object.ts';
import type { ResourceType } from '../client/resource.ts';
import { type Backoff, backoffDelays } from './retry.ts';

/**
 * List edits (finalizers, ownerReferences) as JSON Patches (RFC 6902) whose `test` operations state
 * what the edit assumed about the object. The API server applies the whole patch atomically against
 * the stored object, so if another writer changed the list in between, a test fails and nothing is
 * written; we re-read and rebuild the patch from the fresh object. Two controllers editing the same
 * list therefore never overwrite each other, without the over-strict resourceVersion precondition
 * of an update (which fails on any change to the object, related or not).
 */

/** `key` as one JSON Pointer segment (RFC 6901): `~` and `/` escaped, for a label or annotation path. */
export const pointerSegment = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

export type JsonPatch = Operation[];

export interface GuardedPatchOptions {
  /** Patch attempts in all, each after a fresh read; default 5. */
  attempts?: number;
  /** Pause before each re-read; default DEFAULT_GUARDED_PATCH_BACKOFF. */
  backoff?: Partial<Backoff>;
  fieldManager?: string;
  signal?: AbortSignal;
}

export const DEFAULT_GUARDED_PATCH_ATTEMPTS = 5;

/**
 * Without a pause, a writer that retries (read, then patch) against one that writes back to back
 * falls into step with it: every re-read lands just before the other's next write, and every
 * attempt fails. A random pause of one to two times a growing base breaks the rhythm.
 */
export const DEFAULT_GUARDED_PATCH_BACKOFF: Backoff = {
  initialDelayMs: 5,
  factor: 2,
  jitter: 1,
  maxDelayMs: 500,
};

/** `test` that the object is still the one we read, not a namesake created after a delete. */
export function uidGuard(obj: KubeObject): JsonPatch {
  const uid = obj.metadata?.uid;
  return uid ? [{ op: 'test', path: '/metadata/uid', value: uid }] : [];
}

/**
 * Guards for adding a list the object does not have yet. JSON Patch cannot test that a member is
 * absent (RFC 6902 `test` needs the target to exist), and `add` on a member that appeared meanwhile
 * replaces it, which would drop the other writer's entries. resourceVersion is the only portable
 * guard left: strict, but only used for the first entry of a list.
 */
export function absentListGuard(obj: KubeObject): JsonPatch {
  const resourceVersion = obj.metadata?.resourceVersion;
  return [
    ...uidGuard(obj),
    ...(resourceVersion
      ? [{ op: 'test', path: '/metadata/resourceVersion', value: resourceVersion } as const]
      : []),
  ];
}

/**
 * A rejected guard: the patch did not apply to the stored object (see isPatchTestFailed for how the
 * API server reports that), or 409 for a write that raced at the storage layer. A 422 that names
 * invalid fields is the patched object failing validation: retrying cannot help, so it is thrown.
 */
export function isGuardFailure(err: unknown): boolean {
  return isPatchTestFailed(err) || isConflict(err);
}

/**
 * Sends buildPatch(current) as a JSON Patch; when a guard fails, re-reads the object and tries again
 * with a patch built from the fresh copy, up to `attempts` patches. buildPatch returns undefined when
 * the object already is as wanted; the current copy is then returned without a write. Throws
 * NotFound if the re-read finds a different object (same name, new uid).
 */
export async function patchWithGuards<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  buildPatch: (current: T) => JsonPatch | undefined,
  options: GuardedPatchOptions = {},
): Promise<T> {
  const attempts = options.attempts ?? DEFAULT_GUARDED_PATCH_ATTEMPTS;
  const namespace = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  const delays = backoffDelays(attempts, { ...DEFAULT_GUARDED_PATCH_BACKOFF, ...options.backoff });
  let current = obj;
  for (let attempt = 1; ; attempt++) {
    const patch = buildPatch(current);
    if (patch === undefined) return current;
    try {
      return await client.patch<T>(type, {
        namespace,
        name,
        patchType: 'json',
        body: patch,
        fieldManager: options.fieldManager,
        signal: options.signal,
      });
    } catch (err) {
      if (attempt >= attempts || !isGuardFailure(err)) throw err;
    }
    await sleepFor(delays[attempt - 1] ?? 0, undefined, { signal: options.signal });
    const fresh = await client.get<T>(type, namespace, name, options.signal);
    if (uidOf(obj) && uidOf(fresh) !== uidOf(obj)) {
      throw new ApiError(
        404,
        'NotFound',
        `${type.kind} ${objectKey(obj)} with uid ${uidOf(obj)} no longer exists (found uid ${uidOf(fresh)})`,
      );
    }
    current = fresh;
  }
}
