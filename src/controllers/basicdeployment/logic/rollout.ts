// The rollout arithmetic of the BasicDeployment controller, in one import.
export {
  DEFAULT_MAX_SURGE,
  DEFAULT_MAX_UNAVAILABLE,
  type Fenceposts,
  isRollingUpdate,
  maxSurge,
  maxTotalReplicas,
  maxUnavailable,
  minAvailable,
  resolveFenceposts,
  validateRollingUpdate,
} from './fenceposts.ts';
export {
  type DeadlineRequeue,
  type DeadlineRequeueInput,
  type DeploymentStatusCounts,
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  hasProgressDeadline,
  type ProgressDeadlineInput,
  ProgressReason,
  progressDeadlineRequeue,
  requeueFor,
} from './progress.ts';
export {
  findActiveOrLatest,
  getProportion,
  getReplicaSetFraction,
  isSaturated,
  isScalingEvent,
  planProportionalScale,
} from './proportional-scale.ts';
export { oldPodsRunning, planRecreate, type RecreateStep } from './recreate.ts';
export {
  activeSets,
  recordedReplicaValues,
  totalAvailableReplicas,
  totalSpecReplicas,
  totalStatusReplicas,
} from './replica-counts.ts';
export {
  newReplicaSetReplicas,
  type OldSetsScaleDownPlan,
  planNewReplicaSetScale,
  planOldReplicaSetsScaleDown,
  planRollingUpdate,
  type RollingUpdateStep,
} from './rolling-update.ts';
export type { DeploymentView, ReplicaSetView, RolloutStrategy, ScaleAction, StrategyType } from './types.ts';
