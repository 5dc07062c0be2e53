// Reading the PodMachine's pod into the plain observation status.ts works from (pure).
import type { V1Pod } from '@kubernetes/client-node';
import type { InfrastructureAddress, PodMachine } from '../../apis/index.ts';
import { isBeingDeleted } from '../../runtime/client/object.ts';
import { isControlledBy } from '../../runtime/write/owner-refs.ts';
import { MACHINE_CONTAINER } from './children.ts';
import { podName } from './names.ts';
import type { PodObservation } from './status.ts';

/** Why a pod ended, from its status and its container's last state. */
export function podFailure(pod: V1Pod): string {
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

function isPodReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** The pod's IPs, as the contract's addresses (type InternalIP), in the order the pod lists them. */
export function podAddresses(pod: V1Pod): InfrastructureAddress[] {
  const ips = pod.status?.podIPs?.map((p) => p.ip).filter((ip): ip is string => Boolean(ip)) ?? [];
  return [...new Set(ips)].map((address) => ({ type: 'InternalIP', address }));
}

/** The pod as status.ts sees it; `pod` is whatever holds the pod's name, if anything. */
export function observePod(podMachine: PodMachine, pod: V1Pod | undefined): PodObservation {
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
  return {
    name,
    exists: true,
    terminating: isBeingDeleted(pod),
    phase,
    ready: isPodReady(pod),
    addresses: podAddresses(pod),
    ...(phase === 'Failed' || phase === 'Succeeded' ? { failure: podFailure(pod) } : {}),
  };
}
