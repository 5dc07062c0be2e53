import { activeSets, scaleAction } from './replica-counts.ts';
import type { DeploymentView, ReplicaSetView, ScaleAction } from './types.ts';

export type RecreateStep =
  /** Scale every old set that still wants pods to 0. */
  | { step: 'scale-down-old'; actions: ScaleAction[] }
  /** Old sets want no pods but still report some; wait for their status to reach 0. */
  | { step: 'wait-for-old-pods'; actions: [] }
  /** Old pods are gone and there is no new set yet: create it with `replicas`. */
  | { step: 'create-new'; replicas: number; actions: [] }
  /** Old pods are gone: size the new set (no action when it already has the right size). */
  | { step: 'scale-new'; actions: ScaleAction[] };

/**
 * True while any old set reports pods that exist, terminating ones included (upstream oldPodsRunning
 * counts every pod not Succeeded or Failed). The deployment sees pods only through replica set
 * status, so this is as fresh as that status.
 */
export function oldPodsRunning(oldSets: readonly ReplicaSetView[]): boolean {
  return oldSets.some(
    (set) => set.statusReplicas > 0 || (set.activeReplicas ?? 0) > 0 || (set.terminatingReplicas ?? 0) > 0,
  );
}

/**
 * One reconcile of a Recreate rollout (upstream rolloutRecreate): first all old sets go to 0, then
 * only once they report no pods is the new set created or scaled to spec.replicas.
 */
export function planRecreate(
  deployment: DeploymentView,
  newSet: ReplicaSetView | undefined,
  oldSets: readonly ReplicaSetView[],
): RecreateStep {
  const scaleDowns = activeSets(oldSets).map((set) => scaleAction(deployment, set, 0));
  if (scaleDowns.length > 0) return { step: 'scale-down-old', actions: scaleDowns };
  if (oldPodsRunning(oldSets)) return { step: 'wait-for-old-pods', actions: [] };
  if (newSet === undefined) return { step: 'create-new', replicas: deployment.replicas, actions: [] };
  const actions =
    newSet.specReplicas === deployment.replicas ? [] : [scaleAction(deployment, newSet, deployment.replicas)];
  return { step: 'scale-new', actions };
}
