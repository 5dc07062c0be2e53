import type { V1Pod } from '@kubernetes/client-node';
import {
  BASIC_REPLICA_SET,
  type BasicReplicaSet,
  REPLICA_SET_POD_LABEL,
  REPLICA_SET_POD_VALUE,
} from '../../apis/index.ts';
import { isNotFound } from '../../runtime/client/errors.ts';
import type { KubeClient } from '../../runtime/client/kube-client.ts';
import type { KubeObject } from '../../runtime/client/object.ts';
import { CoreTypes } from '../../runtime/client/resource.ts';
import {
  absentListGuard,
  isGuardFailure,
  type JsonPatch,
  patchWithGuards,
  uidGuard,
} from '../../runtime/write/guarded-patch.ts';
import { adoptPatch, releasePatch } from '../../runtime/write/owner-refs.ts';

/**
 * The writes that claim pods for a BasicReplicaSet (upstream PodControllerRefManager's adopt and
 * release), as guarded JSON Patches. Adopting or marking a pod also adds our marker label, which
 * moves it into the controller's pod cache; releasing one removes it again.
 */

/** JSON Pointer to the marker label ("/" in a key is escaped as "~1"). */
const MARKER_PATH = `/metadata/labels/${REPLICA_SET_POD_LABEL.replaceAll('~', '~0').replaceAll('/', '~1')}`;

function resourceVersionGuard(obj: KubeObject): JsonPatch {
  const rv = obj.metadata?.resourceVersion;
  return rv ? [{ op: 'test', path: '/metadata/resourceVersion', value: rv }] : [];
}

/** Adds the marker label: one member, or the whole map (guarded by resourceVersion) if there is none. */
function addMarker(pod: KubeObject): JsonPatch {
  if (pod.metadata?.labels) return [{ op: 'add', path: MARKER_PATH, value: REPLICA_SET_POD_VALUE }];
  return [
    ...absentListGuard(pod),
    { op: 'add', path: '/metadata/labels', value: { [REPLICA_SET_POD_LABEL]: REPLICA_SET_POD_VALUE } },
  ];
}

/**
 * Makes `rs` the controller of the orphan `pod` and marks it. Guarded by uid and resourceVersion:
 * the decision (no controller, labels match) was made on exactly that version of the pod.
 */
export function adoptPodPatch(pod: KubeObject, rs: BasicReplicaSet): JsonPatch {
  const ownerOps = adoptPatch(pod, rs, BASIC_REPLICA_SET) ?? [];
  return [...uidGuard(pod), ...resourceVersionGuard(pod), ...ownerOps, ...addMarker(pod)];
}

/** Adds the marker label to a pod `rs` already controls. */
export function markPodPatch(pod: KubeObject): JsonPatch {
  return [...uidGuard(pod), ...addMarker(pod)];
}

/** Removes `rs`'s reference from `pod` and our marker label; undefined when there is no reference. */
export function releasePodPatch(pod: KubeObject, rs: BasicReplicaSet): JsonPatch | undefined {
  const ops = releasePatch(pod, rs);
  if (!ops) return undefined;
  if (pod.metadata?.labels?.[REPLICA_SET_POD_LABEL] === undefined) return ops;
  return [...ops, { op: 'remove', path: MARKER_PATH }];
}

/**
 * Sends an adopt or mark patch once: if the pod changed since it was read (a guard failed) or is
 * gone, the pod is left alone and undefined returned; the watch event of that change wakes the set
 * again, which decides on the fresh copy. Other errors are thrown.
 */
export async function claimPod(
  client: KubeClient,
  pod: KubeObject,
  patch: JsonPatch,
  signal?: AbortSignal,
): Promise<V1Pod | undefined> {
  try {
    return await client.patch<V1Pod>(
      CoreTypes.Pod,
      pod.metadata?.namespace,
      pod.metadata?.name ?? '',
      'json',
      patch,
      { signal },
    );
  } catch (err) {
    if (isNotFound(err) || isGuardFailure(err)) return undefined;
    throw err;
  }
}

/** Releases `pod` from `rs` (retrying on a fresh copy if it changed); a pod already gone is fine. */
export async function releasePod(
  client: KubeClient,
  pod: KubeObject,
  rs: BasicReplicaSet,
  signal?: AbortSignal,
): Promise<void> {
  try {
    await patchWithGuards<KubeObject>(client, CoreTypes.Pod, pod, (current) => releasePodPatch(current, rs), {
      signal,
    });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}
