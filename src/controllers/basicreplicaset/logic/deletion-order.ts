import { toMillis } from '../../../runtime/time.ts';
import type { CachedPod } from '../cached.ts';
import {
  isPodActive,
  isPodReady,
  maxContainerRestarts,
  podDeletionCost,
  podReadySince,
} from './pod-state.ts';

export interface DeletionOrderOptions {
  /**
   * Compare ready and creation times in power-of-two buckets of age, breaking ties by UID, so
   * scale-down removes a random mix of young pods instead of always the very newest
   * (upstream LogarithmicScaleDown, on by default). Default true.
   */
  logarithmicScaleDown?: boolean;
}

interface RankedPod<P extends CachedPod = CachedPod> {
  pod: P;
  /** Active related pods on the same node. */
  rank: number;
}

/** Pending < Unknown < Running; anything else (including no phase) ranks with Pending. */
const PHASE_ORDINAL: Readonly<Record<string, number>> = { Pending: 0, Unknown: 1, Running: 2 };

/**
 * For each pod, how many active pods of `relatedPods` share its node (upstream
 * getPodsRankedByRelatedPodsOnSameNode). relatedPods should include `pods`.
 */
export function rankByRelatedPodsOnSameNode(
  pods: readonly CachedPod[],
  relatedPods: readonly CachedPod[],
): number[] {
  const podsOnNode = new Map<string, number>();
  for (const pod of relatedPods) {
    if (!isPodActive(pod)) continue;
    const node = pod.spec?.nodeName ?? '';
    podsOnNode.set(node, (podsOnNode.get(node) ?? 0) + 1);
  }
  return pods.map((pod) => podsOnNode.get(pod.spec?.nodeName ?? '') ?? 0);
}

/**
 * The first `count` pods to delete, best candidates first, ranked like upstream ActivePodsWithRanks:
 * 1. not yet scheduled to a node; 2. Pending, then Unknown, then Running; 3. not ready;
 * 4. lower pod-deletion-cost; 5. more related pods on the same node; 6. ready for less time;
 * 7. more container restarts; 8. created more recently. When every pod goes, no ranking is needed.
 */
export function podsToDeleteInOrder<P extends CachedPod>(
  pods: readonly P[],
  count: number,
  now: number,
  relatedPods: readonly CachedPod[] = pods,
  options: DeletionOrderOptions = {},
): P[] {
  if (count <= 0) return [];
  if (count >= pods.length) return [...pods];
  const logarithmic = options.logarithmicScaleDown ?? true;
  const ranks = rankByRelatedPodsOnSameNode(pods, relatedPods);
  const ranked: RankedPod<P>[] = pods.map((pod, index) => ({ pod, rank: ranks[index]! }));
  ranked.sort((a, b) => {
    if (preferForDeletion(a, b, now, logarithmic)) return -1;
    if (preferForDeletion(b, a, now, logarithmic)) return 1;
    return 0;
  });
  return ranked.slice(0, count).map((entry) => entry.pod);
}

/** Upstream ActivePodsWithRanks.Less: true when `a` should be deleted before `b`. */
function preferForDeletion(a: RankedPod, b: RankedPod, now: number, logarithmic: boolean): boolean {
  const nodeA = a.pod.spec?.nodeName ?? '';
  const nodeB = b.pod.spec?.nodeName ?? '';
  if (nodeA !== nodeB && (nodeA === '' || nodeB === '')) return nodeA === '';

  const phaseA = PHASE_ORDINAL[a.pod.status?.phase ?? ''] ?? 0;
  const phaseB = PHASE_ORDINAL[b.pod.status?.phase ?? ''] ?? 0;
  if (phaseA !== phaseB) return phaseA < phaseB;

  const readyA = isPodReady(a.pod);
  const readyB = isPodReady(b.pod);
  if (readyA !== readyB) return !readyA;

  const costA = podDeletionCost(a.pod);
  const costB = podDeletionCost(b.pod);
  if (costA !== costB) return costA < costB;

  if (a.rank !== b.rank) return a.rank > b.rank;

  if (readyA && readyB) {
    const sinceA = podReadySince(a.pod);
    const sinceB = podReadySince(b.pod);
    if (sinceA !== sinceB) return newerFirst(a.pod, b.pod, sinceA, sinceB, now, logarithmic);
  }

  const restartsA = maxContainerRestarts(a.pod);
  const restartsB = maxContainerRestarts(b.pod);
  if (restartsA !== restartsB) return restartsA > restartsB;

  const createdA = toMillis(a.pod.metadata?.creationTimestamp);
  const createdB = toMillis(b.pod.metadata?.creationTimestamp);
  if (createdA !== createdB) return newerFirst(a.pod, b.pod, createdA, createdB, now, logarithmic);
  return false;
}

/** Compares two different times, the more recent (or unknown) one first. */
function newerFirst(
  a: CachedPod,
  b: CachedPod,
  timeA: number | undefined,
  timeB: number | undefined,
  now: number,
  logarithmic: boolean,
): boolean {
  if (!logarithmic || timeA === undefined || timeB === undefined) return afterOrUnknown(timeA, timeB);
  const bucketDiff = logarithmicBucket(timeA, now) - logarithmicBucket(timeB, now);
  if (bucketDiff === 0) return (a.metadata?.uid ?? '') < (b.metadata?.uid ?? '');
  return bucketDiff < 0;
}

/** Upstream afterOrZero: an unknown time counts as the most recent. */
function afterOrUnknown(timeA: number | undefined, timeB: number | undefined): boolean {
  if (timeA === undefined || timeB === undefined) return timeA === undefined;
  return timeA > timeB;
}

/**
 * floor(log2(age in nanoseconds)), -1 for times not in the past (upstream logarithmicRankDiff).
 * Nanoseconds, as in Go, so bucket boundaries fall where upstream's do.
 */
export function logarithmicBucket(time: number, now: number): number {
  const ageNanos = (now - time) * 1e6;
  return ageNanos > 0 ? Math.floor(Math.log2(ageNanos)) : -1;
}
