import { type Timestamp, toMillis } from '../../../runtime/time.ts';

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

/** Progressing reasons of a rollout still under way: the only ones whose deadline can still pass. */
const DEADLINE_PENDING_REASONS: ReadonlySet<string> = new Set([
  ProgressReason.NewReplicaSetCreated,
  ProgressReason.FoundNewReplicaSet,
  ProgressReason.ReplicaSetUpdated,
  ProgressReason.DeploymentResumed,
]);

export interface DeadlineRequeueInput extends ProgressDeadlineInput {
  /** spec.paused: a paused deployment has no deadline to watch. */
  paused: boolean;
  /** The rollout is complete by the status just computed (upstream DeploymentComplete on newStatus). */
  complete: boolean;
}

/**
 * When to reconcile again to check the progress deadline (upstream requeueStuckDeployment):
 * - `none`: no check can change anything: no deadline or no Progressing condition; the rollout is
 *   complete; the deployment is paused (upstream syncs paused deployments through sync(), which never
 *   requeues for the deadline); or the condition's reason is one the deadline never flips
 *   (ProgressDeadlineExceeded, NewReplicaSetAvailable, DeploymentPaused, InvalidSpec). Upstream requeues
 *   a NewReplicaSetAvailable deployment that lost availability too, but its DeploymentTimedOut is
 *   false for that reason, so the check is a no-op there.
 * - `rate-limited`: less than a second is left (or the deadline just passed): reconcile again through
 *   the per-item backoff, so repeated checks slow down instead of spinning.
 * - `after`: one second past the deadline, so the check lands after it.
 */
export type DeadlineRequeue = { kind: 'none' } | { kind: 'rate-limited' } | { kind: 'after'; ms: number };

export function progressDeadlineRequeue(input: DeadlineRequeueInput, now: number): DeadlineRequeue {
  if (input.paused || input.complete) return { kind: 'none' };
  if (!hasProgressDeadline(input.progressDeadlineSeconds)) return { kind: 'none' };
  if (input.progressingReason === undefined || !DEADLINE_PENDING_REASONS.has(input.progressingReason)) {
    return { kind: 'none' };
  }
  const lastProgress = toMillis(input.lastProgressTime);
  if (lastProgress === undefined) return { kind: 'none' };
  const remaining = lastProgress + input.progressDeadlineSeconds! * 1000 - now;
  return remaining < 1000 ? { kind: 'rate-limited' } : { kind: 'after', ms: remaining + 1000 };
}

/**
 * The reconcile's Result from the deadline check. Every requeue is bounded: a delay of at least a
 * millisecond that only a real wait (the deadline) produces, or the queue's per-item backoff, which
 * the controller does not reset after a rate-limited requeue.
 */
export function requeueFor(
  deadline: DeadlineRequeue,
): { requeueAfterMs: number } | { requeue: true } | undefined {
  if (deadline.kind === 'after') return { requeueAfterMs: Math.max(1, deadline.ms) };
  return deadline.kind === 'rate-limited' ? { requeue: true } : undefined;
}
