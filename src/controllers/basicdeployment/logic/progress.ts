import { type Timestamp, toMillis } from './timestamp.ts';

/** Reasons of the Progressing condition, as upstream names them. */
export const ProgressReason = {
  NewReplicaSetCreated: 'NewReplicaSetCreated',
  FoundNewReplicaSet: 'FoundNewReplicaSet',
  ReplicaSetUpdated: 'ReplicaSetUpdated',
  NewReplicaSetAvailable: 'NewReplicaSetAvailable',
  ProgressDeadlineExceeded: 'ProgressDeadlineExceeded',
  DeploymentPaused: 'DeploymentPaused',
  DeploymentResumed: 'DeploymentResumed',
} as const;

/** Upstream treats a deadline of MaxInt32 as "no deadline". */
const NO_DEADLINE = 2147483647;

export interface DeploymentStatusCounts {
  replicas: number;
  updatedReplicas: number;
  readyReplicas: number;
  availableReplicas: number;
  observedGeneration?: number;
}

/**
 * A rollout is complete when every desired replica is updated and available, no other replica is
 * left, and the status describes the current generation (upstream DeploymentComplete).
 */
export function deploymentComplete(
  desiredReplicas: number,
  generation: number,
  status: DeploymentStatusCounts,
): boolean {
  return (
    status.updatedReplicas === desiredReplicas &&
    status.replicas === desiredReplicas &&
    status.availableReplicas === desiredReplicas &&
    (status.observedGeneration ?? 0) >= generation
  );
}

/**
 * Progress between two status snapshots: more updated, ready or available replicas, or fewer old
 * ones (upstream DeploymentProgressing).
 */
export function deploymentProgressing(
  previous: DeploymentStatusCounts,
  next: DeploymentStatusCounts,
): boolean {
  const previousOld = previous.replicas - previous.updatedReplicas;
  const nextOld = next.replicas - next.updatedReplicas;
  return (
    next.updatedReplicas > previous.updatedReplicas ||
    nextOld < previousOld ||
    next.readyReplicas > previous.readyReplicas ||
    next.availableReplicas > previous.availableReplicas
  );
}

export interface ProgressDeadlineInput {
  progressDeadlineSeconds?: number;
  /** Reason of the current Progressing condition; undefined when there is none. */
  progressingReason?: string;
  /** When progress was last observed (upstream: the Progressing condition's lastUpdateTime). */
  lastProgressTime?: Timestamp;
}

export function hasProgressDeadline(progressDeadlineSeconds: number | undefined): boolean {
  return progressDeadlineSeconds !== undefined && progressDeadlineSeconds !== NO_DEADLINE;
}

/**
 * True once no progress was seen for longer than progressDeadlineSeconds (upstream
 * DeploymentTimedOut). A finished rollout never times out; a timed-out one stays timed out.
 */
export function deploymentTimedOut(input: ProgressDeadlineInput, now: number): boolean {
  if (!hasProgressDeadline(input.progressDeadlineSeconds)) return false;
  if (input.progressingReason === undefined) return false;
  if (input.progressingReason === ProgressReason.NewReplicaSetAvailable) return false;
  if (input.progressingReason === ProgressReason.ProgressDeadlineExceeded) return true;
  const lastProgress = toMillis(input.lastProgressTime);
  if (lastProgress === undefined) return false;
  return lastProgress + input.progressDeadlineSeconds! * 1000 < now;
}

/**
 * Milliseconds after which to reconcile again to check the deadline, or undefined when no check is
 * needed (upstream requeueStuckDeployment). Returns 0 when the deadline is less than a second away,
 * otherwise the time until the deadline plus one second so the check lands after it.
 */
export function progressDeadlineRequeueAfter(
  input: ProgressDeadlineInput,
  complete: boolean,
  now: number,
): number | undefined {
  if (!hasProgressDeadline(input.progressDeadlineSeconds) || input.progressingReason === undefined) {
    return undefined;
  }
  if (complete || input.progressingReason === ProgressReason.ProgressDeadlineExceeded) return undefined;
  const lastProgress = toMillis(input.lastProgressTime);
  if (lastProgress === undefined) return undefined;
  const remaining = lastProgress + input.progressDeadlineSeconds! * 1000 - now;
  return remaining < 1000 ? 0 : remaining + 1000;
}
