import type { CachedPod } from '../cached.ts';
import { isPodActive, isPodAvailable, isPodFinished, isPodReady, nextAvailableIn } from './pod-state.ts';

export interface ReplicaCounts {
  /** Active pods, as upstream's status.replicas (what the scale subresource and an HPA read). */
  replicas: number;
  /** Pods not terminating and not finished: the ones the replica set counts towards spec.replicas. */
  activeReplicas: number;
  /** Pods with a deletion timestamp that have not finished (upstream status.terminatingReplicas). */
  terminatingReplicas: number;
  /** Active pods whose Ready condition is True. */
  readyReplicas: number;
  /** Active pods ready for longer than minReadySeconds. */
  availableReplicas: number;
}

/**
 * Status counts over the pods a replica set owns, as upstream's calculateStatus: replicas, ready
 * and available count active pods only; terminating pods are counted apart; finished pods not at all.
 */
export function computeReplicaCounts(
  pods: readonly CachedPod[],
  minReadySeconds: number,
  now: number,
): ReplicaCounts {
  const counts: ReplicaCounts = {
    replicas: 0,
    activeReplicas: 0,
    terminatingReplicas: 0,
    readyReplicas: 0,
    availableReplicas: 0,
  };
  for (const pod of pods) {
    if (isPodFinished(pod)) continue;
    if (!isPodActive(pod)) {
      counts.terminatingReplicas += 1;
      continue;
    }
    counts.replicas += 1;
    counts.activeReplicas += 1;
    if (isPodReady(pod)) counts.readyReplicas += 1;
    if (isPodAvailable(pod, minReadySeconds, now)) counts.availableReplicas += 1;
  }
  return counts;
}

/**
 * Milliseconds until the next active pod turns available, so the controller can update status
 * then without any pod event to wake it; undefined when no pod is waiting on minReadySeconds.
 */
export function nextAvailabilityCheckIn(
  pods: readonly CachedPod[],
  minReadySeconds: number,
  now: number,
): number | undefined {
  let soonest: number | undefined;
  for (const pod of pods) {
    if (!isPodActive(pod)) continue;
    const wait = nextAvailableIn(pod, minReadySeconds, now);
    if (wait !== undefined && (soonest === undefined || wait < soonest)) soonest = wait;
  }
  return soonest;
}
