// Reading the PodMachine's pod into the plain observation status.ts works from (pure).
import type { V1Probe } from '@kubernetes/client-node';
import type { InfrastructureAddress, PodMachine } from '../../../apis/index.ts';
import { isBeingDeleted } from '../../../runtime/client/object.ts';
import { isControlledBy } from '../../../runtime/write/owner-refs.ts';
import type { CachedPod } from '../cached.ts';
import { podName } from '../names.ts';
import type { PodObservation } from '../status.ts';
import { MACHINE_CONTAINER } from './children.ts';

/** Why a pod ended, from its status and its container's last state. */
export function podFailure(pod: CachedPod): string {
  const container = pod.status?.containerStatuses?.find((c) => c.name === MACHINE_CONTAINER);
  const terminated = container?.state?.terminated ?? container?.lastState?.terminated;
  const parts = [pod.status?.reason, pod.status?.message].filter((p): p is string => Boolean(p));
  if (terminated) {
    parts.push(
      `container ${MACHINE_CONTAINER} terminated${terminated.reason ? ` (${terminated.reason})` : ''} with exit code ${terminated.exitCode}`,
    );
  }
  return parts.length > 0 ? parts.join('; ') : 'no reason given';
}

function isPodReady(pod: CachedPod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** A probe as a person would name it: `readinessProbe (exec pg_isready)`. */
export function describeProbe(kind: string, probe: V1Probe): string {
  const handler = probe.exec
    ? `exec ${(probe.exec.command ?? []).join(' ')}`
    : probe.httpGet
      ? `httpGet ${probe.httpGet.scheme === 'HTTPS' ? 'https' : 'http'} port ${probe.httpGet.port}${probe.httpGet.path ?? '/'}`
      : probe.tcpSocket
        ? `tcpSocket port ${probe.tcpSocket.port}`
        : probe.grpc
          ? `grpc port ${probe.grpc.port}${probe.grpc.service ? ` service ${probe.grpc.service}` : ''}`
          : 'no handler';
  return `${kind} (${handler})`;
}

/**
 * Why a running pod is not Ready, as far as its status and the PodMachine's probes tell: the
 * container waiting (a crash loop, say), its startup or readiness probe not passed, its restarts
 * (a liveness probe restarts it), else the kubelet's Ready condition.
 */
export function podUnreadiness(podMachine: PodMachine, pod: CachedPod): string {
  const container = pod.status?.containerStatuses?.find((c) => c.name === MACHINE_CONTAINER);
  const { startupProbe, readinessProbe } = podMachine.spec;
  const parts: string[] = [];
  const waiting = container?.state?.waiting;
  if (waiting) {
    parts.push(
      `container ${MACHINE_CONTAINER} is waiting${waiting.reason ? `: ${waiting.reason}` : ''}${waiting.message ? ` (${waiting.message})` : ''}`,
    );
  } else if (container?.started === false && startupProbe) {
    parts.push(
      `container ${MACHINE_CONTAINER} has not passed its ${describeProbe('startupProbe', startupProbe)} yet`,
    );
  } else if (container?.ready === false && readinessProbe) {
    parts.push(
      `container ${MACHINE_CONTAINER} is not passing its ${describeProbe('readinessProbe', readinessProbe)}`,
    );
  } else {
    const condition = pod.status?.conditions?.find((c) => c.type === 'Ready');
    const said = [condition?.reason, condition?.message].filter((p): p is string => Boolean(p)).join(': ');
    parts.push(said || `container ${MACHINE_CONTAINER} is not ready`);
  }
  const restarts = container?.restartCount ?? 0;
  if (restarts > 0) {
    const ended = container?.lastState?.terminated;
    parts.push(
      `restarted ${restarts} time${restarts === 1 ? '' : 's'}${ended ? `, last ended${ended.reason ? ` (${ended.reason})` : ''} with exit code ${ended.exitCode}` : ''}`,
    );
  }
  return parts.join('; ');
}

/** Waiting reasons of a container on its way to running: no news. */
const STARTING = new Set(['ContainerCreating', 'PodInitializing']);

/**
 * Why a Pending pod does not run yet, when its status says: its container waiting for a reason
 * other than being created (a missing Secret or key: CreateContainerConfigError; an image that
 * cannot be pulled: ErrImagePull, ImagePullBackOff), else the scheduler's PodScheduled=False.
 */
export function podPendingReason(pod: CachedPod): string | undefined {
  const waiting = pod.status?.containerStatuses?.find((c) => c.name === MACHINE_CONTAINER)?.state?.waiting;
  if (waiting?.reason && !STARTING.has(waiting.reason)) {
    return `container ${MACHINE_CONTAINER} is waiting: ${waiting.reason}${waiting.message ? ` (${waiting.message})` : ''}`;
  }
  const unscheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
  if (!unscheduled) return undefined;
  return `not scheduled: ${unscheduled.message ?? unscheduled.reason ?? 'no reason given'}`;
}

/** The pod's IPs, as the contract's addresses (type InternalIP), in the order the pod lists them. */
export function podAddresses(pod: CachedPod): InfrastructureAddress[] {
  const ips = pod.status?.podIPs?.map((p) => p.ip).filter((ip): ip is string => Boolean(ip)) ?? [];
  return [...new Set(ips)].map((address) => ({ type: 'InternalIP', address }));
}

/** The pod as status.ts sees it; `pod` is whatever holds the pod's name, if anything. */
export function observePod(podMachine: PodMachine, pod: CachedPod | undefined): PodObservation {
  const name = podName(podMachine);
  if (!pod) return { name, exists: false, terminating: false, ready: false, addresses: [] };
  if (!isControlledBy(pod, podMachine)) {
    return {
      name,
      exists: false,
      terminating: false,
      ready: false,
      addresses: [],
      conflict: `pod ${name} exists and is not controlled by this PodMachine; delete or rename it`,
    };
  }
  const phase = pod.status?.phase ?? 'Pending';
  const ready = isPodReady(pod);
  const pending = phase === 'Pending' ? podPendingReason(pod) : undefined;
  return {
    name,
    exists: true,
    terminating: isBeingDeleted(pod),
    phase,
    ready,
    ...(phase === 'Running' && !ready ? { unready: podUnreadiness(podMachine, pod) } : {}),
    ...(pending !== undefined ? { pending } : {}),
    addresses: podAddresses(pod),
    ...(phase === 'Failed' || phase === 'Succeeded' ? { failure: podFailure(pod) } : {}),
  };
}
