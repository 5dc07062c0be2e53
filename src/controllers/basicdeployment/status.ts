import type { BasicDeployment, BasicDeploymentStatus, BasicReplicaSet, Condition } from '../../apis/index.ts';
import { selectorToString } from '../../runtime/labels.ts';
import { findCondition, removeCondition, setCondition, setStalled } from '../../runtime/write/conditions.ts';
import { minAvailable } from './logic/fenceposts.ts';
import {
  type DeploymentStatusCounts,
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  hasProgressDeadline,
  ProgressReason,
} from './logic/progress.ts';
import { deploymentView } from './logic/replica-sets.ts';

export interface RolloutFacts {
  newSet: BasicReplicaSet | undefined;
  allSets: readonly BasicReplicaSet[];
  /** A new set was created in this reconcile. */
  createdNewSet: boolean;
  invalid?: string;
  /** status.collisionCount to report; undefined while there never was a collision. */
  collisionCount?: number;
}

function sumOf(sets: readonly BasicReplicaSet[], pick: (s: BasicReplicaSet) => number | undefined): number {
  return sets.reduce((n, s) => n + (pick(s) ?? 0), 0);
}

function counts(d: BasicDeployment, facts: RolloutFacts): DeploymentStatusCounts {
  const sum = (pick: (s: BasicReplicaSet) => number | undefined) => sumOf(facts.allSets, pick);
  return {
    replicas: sum((s) => s.status?.replicas),
    updatedReplicas: facts.newSet?.status?.replicas ?? 0,
    readyReplicas: sum((s) => s.status?.readyReplicas),
    availableReplicas: sum((s) => s.status?.availableReplicas),
    observedGeneration: d.metadata.generation,
  };
}

function specReplicas(sets: readonly BasicReplicaSet[]): number {
  return sets.reduce((n, s) => n + (s.spec.replicas ?? 1), 0);
}

/**
 * The ReplicaFailure condition to show (upstream getReplicaFailures): the new set's, else the first
 * one an old set reports; undefined when no set reports one.
 */
function replicaFailure(facts: RolloutFacts): Condition | undefined {
  const of = (s: BasicReplicaSet | undefined) => findCondition(s?.status?.conditions, 'ReplicaFailure');
  const fromNew = of(facts.newSet);
  if (fromNew) return fromNew;
  for (const s of facts.allSets) {
    const c = of(s);
    if (c) return c;
  }
  return undefined;
}

/** Progressing=False for a reason only a change of spec ends: kstatus's Stalled, so waiters fail fast. */
function stalled(conditions: readonly Condition[]): { reason: string; message: string } | undefined {
  const progressing = findCondition(conditions, 'Progressing');
  if (progressing?.status !== 'False') return undefined;
  if (
    progressing.reason !== ProgressReason.ProgressDeadlineExceeded &&
    progressing.reason !== 'InvalidSpec'
  ) {
    return undefined;
  }
  return { reason: progressing.reason, message: progressing.message };
}

/**
 * Status from BasicReplicaSet statuses only (this controller never sees a pod), with conditions as
 * upstream's syncRolloutStatus: Available, Progressing (deadline included) and a kstatus Ready.
 */
export function computeStatus(d: BasicDeployment, facts: RolloutFacts, now: number): BasicDeploymentStatus {
  const view = deploymentView(d);
  const desired = view.replicas;
  const next = counts(d, facts);
  const previous: DeploymentStatusCounts = {
    replicas: d.status?.replicas ?? 0,
    updatedReplicas: d.status?.updatedReplicas ?? 0,
    readyReplicas: d.status?.readyReplicas ?? 0,
    availableReplicas: d.status?.availableReplicas ?? 0,
  };
  const generation = d.metadata.generation;
  const at = new Date(now);
  const newSetCurrent = facts.newSet
    ? (facts.newSet.status?.observedGeneration ?? 0) >= (facts.newSet.metadata.generation ?? 0)
    : false;
  const complete = deploymentComplete(desired, generation ?? 0, next) && newSetCurrent;
  // apps/v1 counts terminating pods apart (status.replicas leaves them out); `ready` also waits for
  // the old template's terminating pods to be gone ("no pod of an older template is left").
  const terminating = sumOf(facts.allSets, (s) => s.status?.terminatingReplicas);
  const oldTerminating = terminating - (facts.newSet?.status?.terminatingReplicas ?? 0);
  const ready = complete && oldTerminating === 0;
  let conditions: Condition[] = d.status?.conditions ?? [];
  let lastProgressTime = d.status?.lastProgressTime;

  const available = next.availableReplicas >= minAvailable(view);
  conditions = setCondition(
    conditions,
    available
      ? {
          type: 'Available',
          status: 'True',
          reason: 'MinimumReplicasAvailable',
          message: 'Deployment has minimum availability.',
          observedGeneration: generation,
        }
      : {
          type: 'Available',
          status: 'False',
          reason: 'MinimumReplicasUnavailable',
          message: `Deployment does not have minimum availability (${next.availableReplicas} of ${desired}).`,
          observedGeneration: generation,
        },
    at,
  );

  const progressing = findCondition(conditions, 'Progressing');
  const setName = facts.newSet?.metadata.name ?? '';
  const setProgress = (status: 'True' | 'False' | 'Unknown', reason: string, message: string) => {
    conditions = setCondition(
      conditions,
      { type: 'Progressing', status, reason, message, observedGeneration: generation },
      at,
    );
  };
  if (facts.invalid) {
    setProgress('False', 'InvalidSpec', facts.invalid);
  } else if (view.paused) {
    // A reported lack of progress stays (upstream checkPausedConditions): pausing does not hide it.
    if (progressing?.reason !== ProgressReason.ProgressDeadlineExceeded) {
      setProgress('Unknown', ProgressReason.DeploymentPaused, 'Deployment is paused');
    }
  } else if (complete) {
    if (progressing?.reason !== ProgressReason.NewReplicaSetAvailable) lastProgressTime = at.toISOString();
    setProgress(
      'True',
      ProgressReason.NewReplicaSetAvailable,
      `BasicReplicaSet "${setName}" has successfully progressed.`,
    );
  } else if (facts.createdNewSet) {
    setProgress('True', ProgressReason.NewReplicaSetCreated, `Created new BasicReplicaSet "${setName}"`);
    lastProgressTime = at.toISOString();
  } else if (
    progressing?.reason === ProgressReason.NewReplicaSetAvailable &&
    next.replicas === next.updatedReplicas
  ) {
    // A finished rollout that is scaled or loses a pod is not a new rollout: Progressing stays
    // NewReplicaSetAvailable (upstream syncRolloutStatus's isCompleteDeployment).
  } else if (deploymentProgressing(previous, next) || progressing === undefined) {
    setProgress('True', ProgressReason.ReplicaSetUpdated, `BasicReplicaSet "${setName}" is progressing.`);
    lastProgressTime = at.toISOString();
  } else if (progressing.reason === ProgressReason.DeploymentPaused) {
    // Resumed: the deadline counts again from now (upstream checkPausedConditions).
    setProgress('Unknown', ProgressReason.DeploymentResumed, 'Deployment is resumed');
    lastProgressTime = at.toISOString();
  } else if (
    deploymentTimedOut(
      {
        progressDeadlineSeconds: d.spec.progressDeadlineSeconds ?? 600,
        progressingReason: progressing.reason,
        lastProgressTime,
      },
      now,
    )
  ) {
    setProgress(
      'False',
      ProgressReason.ProgressDeadlineExceeded,
      `BasicReplicaSet "${setName}" has timed out progressing.`,
    );
  }

  // Without a deadline there is no Progressing condition at all (upstream syncRolloutStatus).
  if (!facts.invalid && !hasProgressDeadline(d.spec.progressDeadlineSeconds ?? 600)) {
    conditions = removeCondition(conditions, 'Progressing');
  }

  const failure = replicaFailure(facts);
  conditions = failure
    ? setCondition(
        conditions,
        {
          type: 'ReplicaFailure',
          status: failure.status,
          reason: failure.reason,
          message: failure.message,
          observedGeneration: generation,
          lastTransitionTime: failure.lastTransitionTime,
        },
        at,
      )
    : removeCondition(conditions, 'ReplicaFailure');

  conditions = setStalled(conditions, stalled(conditions), generation, at);

  conditions = setCondition(
    conditions,
    ready
      ? {
          type: 'Ready',
          status: 'True',
          reason: 'RolloutComplete',
          message: `${desired} of ${desired} replicas updated and available`,
          observedGeneration: generation,
        }
      : {
          type: 'Ready',
          status: 'False',
          reason: facts.invalid ? 'InvalidSpec' : view.paused ? 'Paused' : 'RolloutInProgress',
          message: `${next.updatedReplicas} of ${desired} updated, ${next.availableReplicas} available, ${next.replicas - next.updatedReplicas} old replicas left`,
          observedGeneration: generation,
        },
    at,
  );
  return {
    ready,
    observedGeneration: generation,
    replicas: next.replicas,
    updatedReplicas: next.updatedReplicas,
    readyReplicas: next.readyReplicas,
    availableReplicas: next.availableReplicas,
    // As upstream calculateStatus: the replicas the sets want (spec) minus the available ones.
    unavailableReplicas: Math.max(0, specReplicas(facts.allSets) - next.availableReplicas),
    ...(facts.allSets.some((s) => s.status?.terminatingReplicas !== undefined)
      ? { terminatingReplicas: terminating }
      : {}),
    selector: selectorToString(d.spec.selector),
    collisionCount: facts.collisionCount,
    lastProgressTime,
    conditions,
  };
}
