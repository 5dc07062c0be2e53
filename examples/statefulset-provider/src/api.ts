// StatefulSetMachine (examples.basicoperator.dev/v1alpha1): a provider kind of the Machine
// infrastructure contract v1 that realizes a Machine as a StatefulSet of one replica.
import type { V1ObjectMeta } from '@kubernetes/client-node';
import {
  type Condition,
  type InfrastructureAddress,
  type InfrastructureCopyAs,
  type MachinePodFields,
  type MachineVolume,
  type MachineVolumeStatus,
  resourceOf,
} from './basic-operator.ts';

export const GROUP = 'examples.basicoperator.dev';
export const VERSION = 'v1alpha1';

const resource = {
  group: GROUP,
  version: VERSION,
  apiVersion: `${GROUP}/${VERSION}`,
  kind: 'StatefulSetMachine',
  listKind: 'StatefulSetMachineList',
  plural: 'statefulsetmachines',
  singular: 'statefulsetmachine',
  shortNames: ['stsm'],
  namespaced: true,
} as const;
export const STATEFULSET_MACHINE = resourceOf<StatefulSetMachine>()(resource);

/**
 * Immutable: whoever creates the object (the Machine controller never writes it) decides it once.
 * The same shape as a PodMachine's spec, so a backup of one provider restores into the other; the
 * pod fields (MachinePodFields) go into the StatefulSet's pod template, with the same restricted
 * defaults as a PodMachine's pod.
 */
export interface StatefulSetMachineSpec extends MachinePodFields {
  image: string;
  command?: string[];
  args?: string[];
  /** One claim each (`<volume>-<name>-0`), made by kube-controller-manager from volumeClaimTemplates. */
  volumes?: MachineVolume[];
}

/** For people (kubectl get); the contract reads `ready`, the Ready condition and the fields below. */
export const PHASES = ['Pending', 'Provisioning', 'Running', 'Stopping', 'Stopped', 'Failed'] as const;
export type Phase = (typeof PHASES)[number];

export interface StatefulSetMachineStatus {
  phase?: Phase;
  /** The pod runs and is Ready, every claim is Bound, and no stop was requested. */
  ready?: boolean;
  /** `statefulset://<namespace>/<name>`. */
  providerID?: string;
  /** The pod's IPs, as InternalIP. */
  addresses?: InfrastructureAddress[];
  volumes?: MachineVolumeStatus[];
  /**
   * Whom the pod runs as (spec.podSecurityContext over the defaults), so a backup's copies run as it
   * where root is refused; absent when it runs as root.
   */
  copyAs?: InfrastructureCopyAs;
  /** After a stop request: the StatefulSet is at 0 replicas, its pod is gone, the claims are kept. */
  stopped?: boolean;
  /** A terminal failure only: nothing changes it without a person. */
  failureReason?: string;
  failureMessage?: string;
  observedGeneration?: number;
  /** `Ready`, with observedGeneration (the contract's readiness). */
  conditions?: Condition[];
}

export interface StatefulSetMachine {
  apiVersion: typeof resource.apiVersion;
  kind: typeof resource.kind;
  metadata: V1ObjectMeta;
  spec: StatefulSetMachineSpec;
  status?: StatefulSetMachineStatus;
}
