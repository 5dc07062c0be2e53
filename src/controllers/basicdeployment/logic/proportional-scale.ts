import { isRollingUpdate, maxSurge } from './fenceposts.ts';
import { compareByCreation, sortBySizeNewer, sortBySizeOlder } from './ordering.ts';
import { activeSets, recordedReplicaValues, scaleAction, totalSpecReplicas } from './replica-counts.ts';
import type { DeploymentView, ReplicaSetView, ScaleAction } from './types.ts';

/** Go's integer.RoundToInt32: halves round away from zero. */
function roundHalfAwayFromZero(value: number): number {
  return value < 0 ? Math.trunc(value - 0.5) : Math.trunc(value + 0.5);
}

/**
 * How many replicas a set should gain (positive) or lose (negative) when the deployment is resized
 * mid-rollout (upstream getReplicaSetFraction): the set keeps its share of the deployment's
 * maximum size. The share is measured against the max-replicas value recorded on the set when it
 * was last scaled, falling back to the deployment's status.replicas when that is missing or 0.
 */
export function getReplicaSetFraction(set: ReplicaSetView, deployment: DeploymentView): number {
  if (deployment.replicas === 0) return -set.specReplicas;
  const deploymentMaxReplicas = deployment.replicas + maxSurge(deployment);
  let maxBeforeScale = set.maxReplicas;
  if (maxBeforeScale === undefined || maxBeforeScale === 0) {
    maxBeforeScale = deployment.statusReplicas ?? 0;
    // Nothing to measure the share against (the record was removed and no pods run).
    if (maxBeforeScale === 0) return 0;
  }
  const newSize = (set.specReplicas * deploymentMaxReplicas) / maxBeforeScale;
  return roundHalfAwayFromZero(newSize) - set.specReplicas;
}

/**
 * The set's fraction, bounded so the replicas handed out never pass `replicasToAdd` in total
 * (upstream GetReplicaSetProportion). Sets with no replicas never grow proportionally.
 */
export function getProportion(
  set: ReplicaSetView | undefined,
  deployment: DeploymentView,
  replicasToAdd: number,
  replicasAdded: number,
): number {
  if (set === undefined || set.specReplicas === 0 || replicasToAdd === 0 || replicasToAdd === replicasAdded) {
    return 0;
  }
  const fraction = getReplicaSetFraction(set, deployment);
  const allowed = replicasToAdd - replicasAdded;
  return replicasToAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

/**
 * The only active set, or the newest set when none is active; undefined when two or more sets are
 * active and scaling must be proportional (upstream FindActiveOrLatest).
 */
export function findActiveOrLatest(
  newSet: ReplicaSetView | undefined,
  oldSets: readonly ReplicaSetView[],
): ReplicaSetView | undefined {
  const oldNewestFirst = [...oldSets].sort((a, b) => compareByCreation(b, a));
  const active = activeSets([...oldNewestFirst, newSet]);
  if (active.length === 0) return newSet ?? oldNewestFirst[0];
  return active.length === 1 ? active[0] : undefined;
}

/**
 * The new set owns the whole deployment: its spec and the desired value recorded on it both equal
 * spec.replicas, and all of them are available (upstream IsSaturated).
 */
export function isSaturated(deployment: DeploymentView, set: ReplicaSetView | undefined): boolean {
  if (set === undefined) return false;
  return (
    set.specReplicas === deployment.replicas &&
    set.desiredReplicas === deployment.replicas &&
    set.availableReplicas === deployment.replicas
  );
}

/**
 * True when spec.replicas changed since the active sets were last scaled, i.e. the user resized
 * the deployment rather than changed its template (upstream isScalingEvent). With no new set and
 * the deployment not paused a rollout is about to start, which is not a scaling event.
 */
export function isScalingEvent(
  deployment: DeploymentView,
  newSet: ReplicaSetView | undefined,
  oldSets: readonly ReplicaSetView[],
): boolean {
  if (newSet === undefined && !deployment.paused) return false;
  return activeSets([...oldSets, newSet]).some(
    (set) => set.desiredReplicas !== undefined && set.desiredReplicas !== deployment.replicas,
  );
}

/**
 * Resizes a deployment's sets on a scaling event or while paused (upstream scale()). A single
 * active set (or the newest set if none is active) simply takes spec.replicas. A saturated new set
 * means the old sets go to 0. Otherwise, for a rolling update, the difference between
 * spec.replicas + maxSurge and the current total is shared out in proportion to each active set's
 * size, largest set first; on ties newer sets go first when growing and older sets first when
 * shrinking. Rounding leftovers go to the first set in that order (the largest). Recreate
 * deployments are not scaled proportionally.
 */
export function planProportionalScale(
  deployment: DeploymentView,
  newSet: ReplicaSetView | undefined,
  oldSets: readonly ReplicaSetView[],
): ScaleAction[] {
  const single = findActiveOrLatest(newSet, oldSets);
  if (single !== undefined) {
    return single.specReplicas === deployment.replicas
      ? []
      : [scaleAction(deployment, single, deployment.replicas)];
  }
  if (isSaturated(deployment, newSet)) {
    return activeSets(oldSets).map((set) => scaleAction(deployment, set, 0));
  }
  if (!isRollingUpdate(deployment)) return [];

  const active = activeSets([...oldSets, newSet]);
  const allowedSize = deployment.replicas > 0 ? deployment.replicas + maxSurge(deployment) : 0;
  const replicasToAdd = allowedSize - totalSpecReplicas(active);
  const ordered =
    replicasToAdd > 0 ? sortBySizeNewer(active) : replicasToAdd < 0 ? sortBySizeOlder(active) : active;

  let replicasAdded = 0;
  const sizes = ordered.map((set) => {
    const proportion = getProportion(set, deployment, replicasToAdd, replicasAdded);
    replicasAdded += proportion;
    return set.specReplicas + proportion;
  });
  if (sizes.length > 0 && replicasToAdd !== 0) {
    sizes[0] = Math.max(0, sizes[0]! + replicasToAdd - replicasAdded);
  }

  const recorded = recordedReplicaValues(deployment);
  return ordered
    .map((set, index) => scaleAction(deployment, set, sizes[index]!))
    .filter(
      (action, index) =>
        action.to !== action.from ||
        ordered[index]!.desiredReplicas !== recorded.desiredReplicas ||
        ordered[index]!.maxReplicas !== recorded.maxReplicas,
    );
}
