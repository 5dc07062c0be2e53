import type { V1Pod } from '@kubernetes/client-node';
import { isPodActive, isPodAvailable, isPodFinished, isPodReady, nextAvailableIn } from './pod-state.ts';

export interface ReplicaCounts {
  /** Pods that exist and have not finished, terminating ones included. */
  replicas: number;
  /** Pods not terminating and not finished: the ones the replica set counts towards spec.replicas. */
  activeReplicas: number;
  /** Active pods whose Ready condition is True. */
  readyReplicas: number;
  /** Active pods ready for longer than minReadySeconds. */
  availableReplicas: number;
}

/**
 * Status counts over the pods a replica set owns. Ready and available count only active pods,
 * like upstream, which computes them over its filtered (active) pods.
 */
export function computeReplicaCounts(
  pods: readonly V1Pod[],
  minReadySeconds: number,
  now: number,
): ReplicaCounts {
  const counts: ReplicaCounts = { replicas: 0, activeReplicas: 0, readyReplicas: 0, availableReplicas: 0 };
  for (const pod of pods) {
    if (isPodFinished(pod)) continue;
    counts.replicas += 1;
    if (!isPodActive(pod)) continue;
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
  pods: readonly V1Pod[],
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
