import type { V1Pod } from '@kubernetes/client-node';
import {
  BASIC_REPLICA_SET,
  type BasicReplicaSet,
  REPLICA_SET_POD_LABEL,
  REPLICA_SET_POD_VALUE,
} from '../../apis/index.ts';
import { isNotFound } from '../../runtime/client/errors.ts';
import type { KubeClient } from '../../runtime/client/kube-client.ts';
import { controllerRefOf, type KubeObject } from '../../runtime/client/object.ts';
import { CoreTypes } from '../../runtime/client/resource.ts';
import { selectorMatches } from '../../runtime/labels.ts';
import {
  absentListGuard,
  type JsonPatch,
  patchWithGuards,
  pointerSegment,
  uidGuard,
} from '../../runtime/write/guarded-patch.ts';
import { adoptPatch, releasePatch } from '../../runtime/write/owner-refs.ts';

/**
 * The writes that claim pods for a BasicReplicaSet (upstream PodControllerRefManager's adopt and
 * release), as guarded JSON Patches. Adopting or marking a pod also adds our marker label, which
 * moves it into the controller's pod cache; releasing one removes it again.
 */

/** JSON Pointer to the marker label ("/" in a key is escaped as "~1"). */
const MARKER_PATH = `/metadata/labels/${pointerSegment(REPLICA_SET_POD_LABEL)}`;

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

/**
 * Adds the marker label to a pod `rs` already controls. Guarded by resourceVersion too, so a mark
 * that is written is one that moved the pod into the controller's pod cache (a copy that is stale
 * because another sync marked the pod meanwhile is decided again, and needs no write).
 */
export function markPodPatch(pod: KubeObject): JsonPatch {
  return [...uidGuard(pod), ...resourceVersionGuard(pod), ...addMarker(pod)];
}

/** Removes `rs`'s reference from `pod` and our marker label; undefined when there is no reference. */
export function releasePodPatch(pod: KubeObject, rs: BasicReplicaSet): JsonPatch | undefined {
  const ops = releasePatch(pod, rs);
  if (!ops) return undefined;
  if (pod.metadata?.labels?.[REPLICA_SET_POD_LABEL] === undefined) return ops;
  return [...ops, { op: 'remove', path: MARKER_PATH }];
}

/** A pod `rs` controls and that carries our marker after a claim. */
export interface Claimed {
  pod: V1Pod;
  /**
   * Whether this claim's own patch took the pod from unmarked to marked (so it will arrive in the
   * controller's pod cache); false when a fresh copy showed it claimed already (by an earlier sync
   * that decided on the same stale copy), and nothing was written.
   */
  written: boolean;
}

/**
 * Adopts the orphan `pod` for `rs`. The decision was made on a cached copy: when a guard fails (the
 * pod changed since, often only its status), it is made again on a fresh copy, so a pod that still
 * has no controller and still matches is adopted; one that got a controller, stopped matching or is
 * being deleted is left alone. Returns the pod when `rs` controls it and it is marked (adopted now,
 * or already), or undefined when it was not adopted (or is gone). A pod that keeps changing faster
 * than the retries throws, and the set retries with backoff.
 */
export function adoptPod(
  client: KubeClient,
  pod: KubeObject,
  rs: BasicReplicaSet,
  signal?: AbortSignal,
): Promise<Claimed | undefined> {
  const adoptable = (current: KubeObject) =>
    !controllerRefOf(current) &&
    current.metadata?.deletionTimestamp == null &&
    selectorMatches(rs.spec.selector, current.metadata?.labels);
  return claim(
    client,
    pod,
    rs,
    (current) => (adoptable(current) ? adoptPodPatch(current, rs) : undefined),
    signal,
  );
}

/** Adds the marker label to a pod `rs` controls, re-deciding on a fresh copy as adoptPod does. */
export function markPod(
  client: KubeClient,
  pod: KubeObject,
  rs: BasicReplicaSet,
  signal?: AbortSignal,
): Promise<Claimed | undefined> {
  const needsMark = (current: KubeObject) =>
    controllerRefOf(current)?.uid === rs.metadata.uid &&
    current.metadata?.labels?.[REPLICA_SET_POD_LABEL] === undefined;
  return claim(
    client,
    pod,
    rs,
    (current) => (needsMark(current) ? markPodPatch(current) : undefined),
    signal,
  );
}

async function claim(
  client: KubeClient,
  pod: KubeObject,
  rs: BasicReplicaSet,
  build: (current: KubeObject) => JsonPatch | undefined,
  signal?: AbortSignal,
): Promise<Claimed | undefined> {
  // patchWithGuards returns after the patch of the last decision succeeded, or without a write when
  // the last decision was that none is needed.
  let lastDecision: JsonPatch | undefined;
  const decide = (current: KubeObject) => {
    lastDecision = build(current);
    return lastDecision;
  };
  try {
    const result = await patchWithGuards<KubeObject>(client, CoreTypes.Pod, pod, decide, { signal });
    const claimed =
      controllerRefOf(result)?.uid === rs.metadata.uid &&
      result.metadata?.labels?.[REPLICA_SET_POD_LABEL] === REPLICA_SET_POD_VALUE;
    return claimed ? { pod: result as V1Pod, written: lastDecision !== undefined } : undefined;
  } catch (err) {
    if (isNotFound(err)) return undefined;
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
