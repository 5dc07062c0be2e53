// The status a StatefulSetMachine reports, from what the reconciler observed (pure). This is where
// the contract's fields come from: ready and the Ready condition, providerID, addresses, volumes,
// copyAs, stopped, and failureReason/failureMessage for terminal failures only.
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { Phase, StatefulSetMachine, StatefulSetMachineStatus } from './api.ts';
import {
  copyIdentityOf,
  type InfrastructureAddress,
  type MachineVolumeStatus,
  reportableCopyAs,
  setCondition,
} from './basic-operator.ts';
import { CONTAINER_NAME, providerID } from './names.ts';

export const READY = 'Ready';
/** Ready's reason while admission refuses the StatefulSet's pod (Pod Security, a quota, a webhook). */
export const POD_REFUSED = 'PodRefused';

export interface Verdict {
  reason: string;
  message: string;
}

/** What the pod tells the contract: whether it serves, and its addresses. */
export interface PodView {
  name: string;
  ready: boolean;
  addresses: InfrastructureAddress[];
  /** Why it is not ready, for the Ready condition. */
  waiting: string;
}

export function observePod(pod: V1Pod): PodView {
  const name = pod.metadata?.name ?? '';
  const phase = pod.status?.phase ?? 'Pending';
  const ready =
    phase === 'Running' &&
    pod.metadata?.deletionTimestamp == null &&
    (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  const ips = pod.status?.podIPs?.map((p) => p.ip) ?? (pod.status?.podIP ? [pod.status.podIP] : []);
  const container = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER_NAME);
  const why =
    container?.state?.waiting?.reason ??
    container?.state?.terminated?.reason ??
    pod.status?.reason ??
    (phase === 'Running' ? notReady(container) : '');
  const detail = container?.state?.waiting?.message ?? pod.status?.message;
  return {
    name,
    ready,
    addresses: ips.filter(Boolean).map((address) => ({ type: 'InternalIP', address })),
    waiting: [`pod ${name} is ${pod.metadata?.deletionTimestamp ? 'terminating' : phase}`, why, detail]
      .filter(Boolean)
      .join(': '),
  };
}

/**
 * Why a running container is not ready: its startup probe has not passed (started false), or its
 * readiness probe has not (a container without one is ready once started).
 */
function notReady(container: V1ContainerStatus | undefined): string {
  if (!container) return 'not Ready';
  const restarts = container.restartCount > 0 ? `, restarted ${container.restartCount} times` : '';
  const probe =
    container.started === false ? 'has not started (startup probe)' : 'is not ready (readiness probe)';
  return `container ${container.name} ${probe}${restarts}`;
}

/** What the StatefulSet and its pod amount to, once nothing else (a restore, a conflict) is in the way. */
export interface Running {
  statefulSet: string;
  /** The pod `<name>-0`, as the cache shows it; undefined before kube-controller-manager made it. */
  pod: PodView | undefined;
  podName: string;
  /** Without a pod: why the API server refuses one of the template (a dry run's answer). */
  refused?: string;
}

/** Ready when the pod runs and is Ready and every claim is Bound; else what is missing. */
export function readiness(
  running: Running,
  volumes: readonly MachineVolumeStatus[],
): Verdict & { ready: boolean } {
  const unbound = volumes.filter((v) => v.phase !== 'Bound');
  if (!running.pod && running.refused !== undefined) {
    return {
      ready: false,
      reason: POD_REFUSED,
      message: `the API server refuses pod ${running.podName} of StatefulSet ${running.statefulSet}: ${running.refused}; kube-controller-manager retries with backoff`,
    };
  }
  if (!running.pod) {
    return {
      ready: false,
      reason: 'WaitingForPod',
      message: `waiting for kube-controller-manager to create pod ${running.podName} of StatefulSet ${running.statefulSet} (kubectl describe statefulset ${running.statefulSet} shows why it has not)`,
    };
  }
  if (unbound.length > 0) {
    const list = unbound.map((v) => `${v.claimName} (${v.phase ?? 'not created yet'})`).join(', ');
    return { ready: false, reason: 'ClaimsNotBound', message: `waiting for claims to be Bound: ${list}` };
  }
  if (!running.pod.ready) return { ready: false, reason: 'PodNotReady', message: running.pod.waiting };
  const claims = volumes.length > 0 ? `; claims ${volumes.map((v) => v.claimName).join(', ')} Bound` : '';
  return { ready: true, reason: 'Running', message: `pod ${running.pod.name} is Running and Ready${claims}` };
}

/**
 * One reconcile's findings, in the order they win: a terminal failure, a stop, waiting before the
 * StatefulSet (a backup, a restore), then the StatefulSet's pod and claims.
 */
export type Observation =
  | { kind: 'failed'; failure: Verdict }
  | { kind: 'stopping'; stopped: boolean; message: string }
  | { kind: 'waiting'; phase: 'Pending' | 'Provisioning'; verdict: Verdict }
  | { kind: 'running'; running: Running };

export interface Observations {
  observation: Observation;
  volumes: MachineVolumeStatus[];
}

export function computeStatus(
  machine: StatefulSetMachine,
  before: StatefulSetMachineStatus | undefined,
  { observation, volumes }: Observations,
  now: Date,
): StatefulSetMachineStatus {
  let phase: Phase;
  let verdict: Verdict;
  let ready = false;
  let addresses: InfrastructureAddress[] = [];
  const status: StatefulSetMachineStatus = { providerID: providerID(machine), volumes };
  // The pod template's identity (statefulset.ts merges the same podSecurityContext over the same defaults).
  const copyAs = reportableCopyAs(copyIdentityOf(machine.spec));
  if (copyAs) status.copyAs = copyAs;
  switch (observation.kind) {
    case 'failed':
      phase = 'Failed';
      verdict = observation.failure;
      status.failureReason = observation.failure.reason;
      status.failureMessage = observation.failure.message;
      break;
    case 'stopping':
      phase = observation.stopped ? 'Stopped' : 'Stopping';
      verdict = { reason: phase, message: observation.message };
      status.stopped = observation.stopped;
      break;
    case 'waiting':
      phase = observation.phase;
      verdict = observation.verdict;
      break;
    case 'running': {
      const r = readiness(observation.running, volumes);
      ready = r.ready;
      phase = r.ready ? 'Running' : 'Provisioning';
      verdict = r;
      addresses = observation.running.pod?.addresses ?? [];
      break;
    }
  }
  status.phase = phase;
  status.ready = ready;
  if (addresses.length > 0) status.addresses = addresses;
  status.conditions = setCondition(
    before?.conditions,
    {
      type: READY,
      status: ready ? 'True' : 'False',
      reason: verdict.reason,
      message: verdict.message,
      observedGeneration: machine.metadata.generation,
    },
    now,
  );
  return status;
}
