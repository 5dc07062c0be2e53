import { toMillis } from '../../../runtime/time.ts';
import { type CachedPod, POD_DELETION_COST_ANNOTATION } from '../cached.ts';

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** Succeeded or Failed: the pod's containers will not run again. */
export function isPodFinished(pod: CachedPod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** The pod has a deletion timestamp and is shutting down. */
export function isPodTerminating(pod: CachedPod): boolean {
  return pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
}

/** A pod a replica set counts towards its replicas: not terminating and not finished (upstream IsPodActive). */
export function isPodActive(pod: CachedPod): boolean {
  return !isPodFinished(pod) && !isPodTerminating(pod);
}

/** The Ready condition is True. */
export function isPodReady(pod: CachedPod): boolean {
  return readyCondition(pod)?.status === 'True';
}

/** When the pod last became ready, in epoch ms; undefined if it is not ready or the time is unknown. */
export function podReadySince(pod: CachedPod): number | undefined {
  const condition = readyCondition(pod);
  if (condition?.status !== 'True') return undefined;
  return toMillis(condition.lastTransitionTime);
}

function readyCondition(pod: CachedPod) {
  return pod.status?.conditions?.find((condition) => condition.type === 'Ready');
}

/**
 * Ready for longer than minReadySeconds (upstream IsPodAvailable). With minReadySeconds > 0 a ready
 * pod without a known transition time is never available, and "longer" is strict.
 */
export function isPodAvailable(pod: CachedPod, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds === 0) return true;
  const readySince = podReadySince(pod);
  return readySince !== undefined && readySince + minReadySeconds * 1000 < now;
}

/**
 * Milliseconds until a ready pod becomes available, to schedule the next status update; undefined
 * when the pod is not ready, already available, or will never become available by waiting.
 */
export function nextAvailableIn(pod: CachedPod, minReadySeconds: number, now: number): number | undefined {
  if (!isPodReady(pod) || isPodAvailable(pod, minReadySeconds, now)) return undefined;
  const readySince = podReadySince(pod);
  if (readySince === undefined) return undefined;
  // Availability needs now to be strictly past the threshold, hence the extra millisecond.
  return readySince + minReadySeconds * 1000 - now + 1;
}

/**
 * The pod-deletion-cost annotation as an int32 (upstream GetDeletionCostFromPodAnnotations).
 * Missing or invalid values (a "+" sign, leading zeros, non-digits, out of int32 range) count as 0.
 */
export function podDeletionCost(pod: CachedPod): number {
  const value = pod.metadata?.annotations?.[POD_DELETION_COST_ANNOTATION];
  if (value === undefined || !/^(0|-\d+|[1-9]\d*)$/.test(value)) return 0;
  const cost = Number(value);
  if (cost < INT32_MIN || cost > INT32_MAX || cost === 0) return 0; // 0 also folds "-0" into 0
  return cost;
}

/** The highest restart count among the pod's containers. */
export function maxContainerRestarts(pod: CachedPod): number {
  return (pod.status?.containerStatuses ?? []).reduce((max, status) => Math.max(max, status.restartCount), 0);
}
