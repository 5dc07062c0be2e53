import type { BasicReplicaSet, BasicReplicaSetStatus, Condition } from '../../apis/index.ts';
import { selectorToString } from '../../runtime/labels.ts';
import { removeCondition, setCondition } from '../../runtime/write/conditions.ts';
import type { CachedPod } from './cached.ts';
import { computeReplicaCounts } from './logic/replica-status.ts';

/** Why creating or deleting pods failed in the last reconcile, shown as the ReplicaFailure condition. */
export interface ReplicaFailure {
  reason: 'FailedCreate' | 'FailedDelete';
  message: string;
}

export function computeStatus(
  rs: BasicReplicaSet,
  pods: readonly CachedPod[],
  failure: ReplicaFailure | undefined,
  now: number,
): BasicReplicaSetStatus {
  const desired = rs.spec.replicas ?? 1;
  const counts = computeReplicaCounts(pods, rs.spec.minReadySeconds ?? 0, now);
  const generation = rs.metadata.generation;
  const at = new Date(now);
  let conditions: Condition[] = rs.status?.conditions ?? [];
  conditions = failure
    ? setCondition(
        conditions,
        { type: 'ReplicaFailure', status: 'True', ...failure, observedGeneration: generation },
        at,
      )
    : removeCondition(conditions, 'ReplicaFailure');
  // Pods still terminating are not replicas (apps/v1), but they still run: Ready waits for them.
  const ready =
    counts.activeReplicas === desired &&
    counts.availableReplicas === desired &&
    counts.terminatingReplicas === 0;
  conditions = setCondition(
    conditions,
    ready
      ? {
          type: 'Ready',
          status: 'True',
          reason: 'ReplicasAvailable',
          message: `${desired} of ${desired} replicas available`,
          observedGeneration: generation,
        }
      : {
          type: 'Ready',
          status: 'False',
          reason: failure ? failure.reason : 'ReplicasNotAvailable',
          message: `${counts.availableReplicas} of ${desired} replicas available, ${counts.activeReplicas} active, ${counts.terminatingReplicas} terminating`,
          observedGeneration: generation,
        },
    at,
  );
  return {
    activeReplicas: counts.activeReplicas,
    replicas: counts.replicas,
    terminatingReplicas: counts.terminatingReplicas,
    readyReplicas: counts.readyReplicas,
    availableReplicas: counts.availableReplicas,
    observedGeneration: generation,
    selector: selectorToString(rs.spec.selector),
    conditions,
  };
}
