import { maxSurge } from './fenceposts.ts';
import type { DeploymentView, ReplicaSetView, ScaleAction } from './types.ts';

/** Sum of spec.replicas (upstream GetReplicaCountForReplicaSets). */
export function totalSpecReplicas(sets: readonly (ReplicaSetView | undefined)[]): number {
  return sets.reduce((sum, set) => sum + (set?.specReplicas ?? 0), 0);
}

/** Sum of status.availableReplicas. */
export function totalAvailableReplicas(sets: readonly (ReplicaSetView | undefined)[]): number {
  return sets.reduce((sum, set) => sum + (set?.availableReplicas ?? 0), 0);
}

/** Sets that still want pods (upstream FilterActiveReplicaSets: spec.replicas > 0). */
export function activeSets<T extends ReplicaSetView>(sets: readonly (T | undefined)[]): T[] {
  return sets.filter((set): set is T => set !== undefined && set.specReplicas > 0);
}

/** The desired/max values every scale of a deployment's set records (upstream SetReplicasAnnotations). */
export function recordedReplicaValues(deployment: DeploymentView): {
  desiredReplicas: number;
  maxReplicas: number;
} {
  return { desiredReplicas: deployment.replicas, maxReplicas: deployment.replicas + maxSurge(deployment) };
}

export function scaleAction(deployment: DeploymentView, set: ReplicaSetView, to: number): ScaleAction {
  return { name: set.name, from: set.specReplicas, to, ...recordedReplicaValues(deployment) };
}
