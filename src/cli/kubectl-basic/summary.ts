// One line's worth of state for any object in a tree: ready or not, a short status and a reason.
import type { Unstructured } from '../../runtime/client/object.ts';
import { conditionOf, field, listField, numberField, stringField } from './fields.ts';

export interface Summary {
  /** undefined: the kind has no notion of readiness. */
  ready: boolean | undefined;
  /** Short state: a phase, `ready/desired` replicas, Bound, Complete... */
  status: string;
  reason: string;
  message: string;
}

/** The state of a container that keeps a pod from running or being ready: waiting, or terminated. */
export interface ContainerProblem {
  container: string;
  state: 'waiting' | 'terminated';
  reason: string;
  message: string;
  restartCount: number;
}

export function summarize(kind: string, obj: Unstructured): Summary {
  switch (kind) {
    case 'Pod':
      return summarizePod(obj);
    case 'PersistentVolumeClaim': {
      const phase = stringField(obj, 'status.phase') ?? 'Pending';
      return { ready: phase === 'Bound', status: phase, reason: '', message: '' };
    }
    case 'Job':
      return summarizeJob(obj);
    case 'StatefulSet':
      return summarizeStatefulSet(obj);
    default:
      return summarizeByReady(kind, obj);
  }
}

function summarizeByReady(kind: string, obj: Unstructured): Summary {
  const ready = conditionOf(obj, 'Ready');
  const readyField = field(obj, 'status.ready');
  const isReady = ready ? ready.status === 'True' : typeof readyField === 'boolean' ? readyField : undefined;
  let status = stringField(obj, 'status.phase') ?? '';
  if (kind === 'BasicDeployment' || kind === 'BasicReplicaSet') {
    status = `${numberField(obj, 'status.readyReplicas') ?? 0}/${numberField(obj, 'spec.replicas') ?? 1} ready`;
  }
  if (obj.metadata?.deletionTimestamp) status = status ? `${status}, deleting` : 'deleting';
  return { ready: isReady, status, reason: ready?.reason ?? '', message: ready?.message ?? '' };
}

/** Ready as `kubectl rollout status` has it: every desired pod of the current spec ready. */
function summarizeStatefulSet(set: Unstructured): Summary {
  const desired = numberField(set, 'spec.replicas') ?? 1;
  const ready = numberField(set, 'status.readyReplicas') ?? 0;
  const observed = numberField(set, 'status.observedGeneration') ?? 0;
  const current = observed >= (set.metadata?.generation ?? 0);
  // Pods of an older revision may be ready too: they count only once replaced (an OnDelete set's
  // never are until deleted, and then it is not ready, as its rollout is not done).
  const updated = numberField(set, 'status.updatedReplicas');
  return {
    ready: current && ready >= desired && (updated === undefined || updated >= desired),
    status: `${ready}/${desired} ready${set.metadata?.deletionTimestamp ? ', deleting' : ''}`,
    reason: '',
    message: '',
  };
}

function summarizePod(pod: Unstructured): Summary {
  const phase = stringField(pod, 'status.phase') ?? 'Pending';
  const ready = conditionOf(pod, 'Ready');
  const problem = containerProblem(pod);
  const scheduled = conditionOf(pod, 'PodScheduled');
  let status = phase;
  let reason = problem?.reason ?? '';
  let message = problem?.message ?? '';
  if (!problem && scheduled?.status === 'False') {
    reason = scheduled.reason;
    message = scheduled.message;
  } else if (!problem && ready?.status === 'False') {
    reason = ready.reason || 'NotReady';
    message = ready.message;
  }
  if (pod.metadata?.deletionTimestamp) status = 'Terminating';
  return {
    ready: phase === 'Succeeded' ? undefined : ready?.status === 'True',
    status,
    reason,
    message,
  };
}

/** The first container (init containers first) that is waiting with a reason or has failed. */
export function containerProblem(pod: Unstructured): ContainerProblem | undefined {
  const statuses = [
    ...listField(pod, 'status.initContainerStatuses'),
    ...listField(pod, 'status.containerStatuses'),
  ];
  for (const s of statuses) {
    const container = typeof s.name === 'string' ? s.name : '';
    const restartCount = typeof s.restartCount === 'number' ? s.restartCount : 0;
    const waitingReason = stringField(s, 'state.waiting.reason');
    if (waitingReason && waitingReason !== 'ContainerCreating' && waitingReason !== 'PodInitializing') {
      return {
        container,
        state: 'waiting',
        reason: waitingReason,
        message: stringField(s, 'state.waiting.message') ?? '',
        restartCount,
      };
    }
    const exitCode = numberField(s, 'state.terminated.exitCode');
    if (exitCode !== undefined && exitCode !== 0) {
      return {
        container,
        state: 'terminated',
        reason: stringField(s, 'state.terminated.reason') ?? 'Error',
        message: stringField(s, 'state.terminated.message') ?? `exit code ${exitCode}`,
        restartCount,
      };
    }
  }
  return undefined;
}

/** A container that is not ready, as the pod's status tells: started, restarts, how it last ended. */
export interface ContainerReadiness {
  container: string;
  /** containerStatuses[].started: false while its startup probe has not passed. */
  started: boolean | undefined;
  restartCount: number;
  /** The reason and exit code of its previous run (lastState.terminated), when it was restarted. */
  lastTermination: string | undefined;
}

/** The pod's containers (not the init containers) that are not ready, in the pod's order. */
export function unreadyContainers(pod: Unstructured): ContainerReadiness[] {
  return listField(pod, 'status.containerStatuses')
    .filter((s) => s.ready !== true)
    .map((s) => {
      const exitCode = numberField(s, 'lastState.terminated.exitCode');
      const reason = stringField(s, 'lastState.terminated.reason');
      return {
        container: typeof s.name === 'string' ? s.name : '',
        started: typeof s.started === 'boolean' ? s.started : undefined,
        restartCount: typeof s.restartCount === 'number' ? s.restartCount : 0,
        lastTermination: exitCode === undefined ? undefined : `${reason ?? 'Error'}, exit code ${exitCode}`,
      };
    });
}

function summarizeJob(job: Unstructured): Summary {
  const failed = conditionOf(job, 'Failed');
  if (failed?.status === 'True') {
    return { ready: false, status: 'Failed', reason: failed.reason, message: failed.message };
  }
  if (conditionOf(job, 'Complete')?.status === 'True') {
    return { ready: true, status: 'Complete', reason: '', message: '' };
  }
  const active = numberField(job, 'status.active') ?? 0;
  const failures = numberField(job, 'status.failed') ?? 0;
  return {
    ready: false,
    status: active > 0 ? 'Running' : 'Pending',
    reason: failures > 0 ? `${failures} failed pod${failures === 1 ? '' : 's'}` : '',
    message: '',
  };
}
