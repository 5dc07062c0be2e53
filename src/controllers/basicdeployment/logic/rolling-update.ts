import { isRollingUpdate, maxSurge, maxUnavailable } from './fenceposts.ts';
import { sortByCreation } from './ordering.ts';
import { activeSets, scaleAction, totalAvailableReplicas, totalSpecReplicas } from './replica-counts.ts';
import type { DeploymentView, ReplicaSetView, ScaleAction } from './types.ts';

/**
 * The spec.replicas the new set should have now (upstream NewRSNewReplicas). Rolling update: grow
 * it as far as maxSurge allows, never past spec.replicas. Recreate: spec.replicas straight away.
 * Pass `newSet` undefined to size a set that is about to be created.
 */
export function newReplicaSetReplicas(
  deployment: DeploymentView,
  newSet: ReplicaSetView | undefined,
  oldSets: readonly ReplicaSetView[],
): number {
  const current = newSet?.specReplicas ?? 0;
  if (!isRollingUpdate(deployment)) return deployment.replicas;
  const maxTotalPods = deployment.replicas + maxSurge(deployment);
  const currentPodCount = totalSpecReplicas([...oldSets, newSet]);
  if (currentPodCount >= maxTotalPods) return current;
  const scaleUpCount = Math.min(maxTotalPods - currentPodCount, deployment.replicas - current);
  return current + scaleUpCount;
}

/** Step 1 of a rolling update (upstream reconcileNewReplicaSet): the new set's scale, if it must change. */
export function planNewReplicaSetScale(
  deployment: DeploymentView,
  newSet: ReplicaSetView,
  oldSets: readonly ReplicaSetView[],
): ScaleAction | undefined {
  if (newSet.specReplicas === deployment.replicas) return undefined;
  const target =
    newSet.specReplicas > deployment.replicas
      ? deployment.replicas
      : newReplicaSetReplicas(deployment, newSet, oldSets);
  return target === newSet.specReplicas ? undefined : scaleAction(deployment, newSet, target);
}

export interface OldSetsScaleDownPlan {
  /** At most one action per set, holding its final size. */
  actions: ScaleAction[];
  /** Replicas removed because they were unavailable anyway. */
  cleanedUp: number;
  /** Available replicas removed within the maxUnavailable budget. */
  scaledDown: number;
}

/**
 * Step 2 of a rolling update (upstream reconcileOldReplicaSets): shrink old sets, oldest first,
 * without taking availability below spec.replicas - maxUnavailable. Unavailable old replicas go
 * first (cleanupUnhealthyReplicas) because removing them costs no availability; then available
 * ones (scaleDownOldReplicaSetsForRollingUpdate). Unavailable pods of the new set count against
 * the budget, so a broken new template cannot drain the old pods.
 */
export function planOldReplicaSetsScaleDown(
  deployment: DeploymentView,
  newSet: ReplicaSetView,
  oldSets: readonly ReplicaSetView[],
): OldSetsScaleDownPlan {
  const none: OldSetsScaleDownPlan = { actions: [], cleanedUp: 0, scaledDown: 0 };
  const candidates = sortByCreation(activeSets(oldSets)).map((set) => ({ set, size: set.specReplicas }));
  if (totalSpecReplicas(candidates.map((c) => c.set)) === 0) return none;

  const minAvailable = deployment.replicas - maxUnavailable(deployment);
  const allPodsCount = totalSpecReplicas([...oldSets, newSet]);
  const newSetUnavailable = newSet.specReplicas - newSet.availableReplicas;
  const maxScaledDown = allPodsCount - minAvailable - newSetUnavailable;
  if (maxScaledDown <= 0) return none;

  let cleanedUp = 0;
  for (const candidate of candidates) {
    if (cleanedUp >= maxScaledDown) break;
    if (candidate.size === 0 || candidate.size === candidate.set.availableReplicas) continue;
    const unhealthy = candidate.size - candidate.set.availableReplicas;
    // Status reports more available pods than the spec wants (a stale status); upstream refuses
    // the request and skips the rest of this step, and so do we.
    if (unhealthy < 0) return finish(deployment, candidates, cleanedUp, 0);
    const count = Math.min(maxScaledDown - cleanedUp, unhealthy);
    candidate.size -= count;
    cleanedUp += count;
  }

  let scaledDown = 0;
  const availablePodCount = totalAvailableReplicas([...candidates.map((c) => c.set), newSet]);
  if (availablePodCount > minAvailable) {
    const totalScaleDownCount = availablePodCount - minAvailable;
    for (const candidate of candidates) {
      if (scaledDown >= totalScaleDownCount) break;
      if (candidate.size === 0) continue;
      const count = Math.min(candidate.size, totalScaleDownCount - scaledDown);
      candidate.size -= count;
      scaledDown += count;
    }
  }
  return finish(deployment, candidates, cleanedUp, scaledDown);
}

function finish(
  deployment: DeploymentView,
  candidates: readonly { set: ReplicaSetView; size: number }[],
  cleanedUp: number,
  scaledDown: number,
): OldSetsScaleDownPlan {
  const actions = candidates
    .filter((c) => c.size !== c.set.specReplicas)
    .map((c) => scaleAction(deployment, c.set, c.size));
  return { actions, cleanedUp, scaledDown };
}

export type RollingUpdateStep =
  | { step: 'scale-new'; actions: ScaleAction[] }
  | { step: 'scale-down-old'; actions: ScaleAction[] }
  | { step: 'steady'; actions: [] };

/**
 * One reconcile of a rolling update (upstream rolloutRolling): scale the new set up if possible,
 * otherwise scale old sets down if possible, otherwise nothing to do. The caller then waits for
 * status changes and calls again.
 */
export function planRollingUpdate(
  deployment: DeploymentView,
  newSet: ReplicaSetView,
  oldSets: readonly ReplicaSetView[],
): RollingUpdateStep {
  const newSetAction = planNewReplicaSetScale(deployment, newSet, oldSets);
  if (newSetAction !== undefined) return { step: 'scale-new', actions: [newSetAction] };
  const oldPlan = planOldReplicaSetsScaleDown(deployment, newSet, oldSets);
  if (oldPlan.actions.length > 0) return { step: 'scale-down-old', actions: oldPlan.actions };
  return { step: 'steady', actions: [] };
}
