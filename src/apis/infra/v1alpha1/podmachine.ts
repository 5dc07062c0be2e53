// PodMachine: the first provider of the Machine infrastructure contract (docs/contracts.md), one Pod
// plus one PersistentVolumeClaim per volume. An inline Machine is realized as one of these.
import type { V1ListMeta, V1ObjectMeta } from '@kubernetes/client-node';
import { resourceOf } from '../../../runtime/client/resource.ts';
import type { ApiResource, Condition } from '../../meta.ts';
import type { InfrastructureAddress, InfrastructureCopyAs } from '../contract/v1.ts';
import { INFRA_API_VERSION, INFRA_GROUP, INFRA_VERSION } from './group.ts';
import type { MachinePhase, MachineVolume, MachineVolumeStatus } from './machine.ts';
import type { MachinePodFields } from './pod-fields.ts';

const podMachineResource = {
  group: INFRA_GROUP,
  version: INFRA_VERSION,
  apiVersion: INFRA_API_VERSION,
  kind: 'PodMachine',
  listKind: 'PodMachineList',
  plural: 'podmachines',
  singular: 'podmachine',
  shortNames: [],
  namespaced: true,
} as const satisfies ApiResource;
export const POD_MACHINE = resourceOf<PodMachine>()(podMachineResource);

/** Immutable: the Machine controller never writes it after creating it. */
export interface PodMachineSpec extends MachinePodFields {
  image: string;
  command?: string[];
  args?: string[];
  volumes?: MachineVolume[];
}

/** The contract's status fields (docs/contracts.md), plus a phase and conditions for people. */
export interface PodMachineStatus {
  phase?: MachinePhase;
  /** The contract's readiness: the pod runs and is Ready, every claim is Bound. */
  ready?: boolean;
  /** `pod://<namespace>/<name>` once the pod exists. */
  providerID?: string;
  /** The pod's IPs (InternalIP). */
  addresses?: InfrastructureAddress[];
  volumes?: MachineVolumeStatus[];
  /** Whom the pod runs as (its podSecurityContext over the defaults); absent when it runs as root. */
  copyAs?: InfrastructureCopyAs;
  /** After a stop request: the pod (and any restore still copying) is gone, the claims are kept. */
  stopped?: boolean;
  /** A terminal failure: a pod or restore that failed, an object of someone else in the way. */
  failureReason?: string;
  failureMessage?: string;
  observedGeneration?: number;
  /** `Ready` (the contract's, with observedGeneration) and `VolumesReady`. */
  conditions?: Condition[];
}

export interface PodMachine {
  apiVersion: typeof podMachineResource.apiVersion;
  kind: typeof podMachineResource.kind;
  metadata: V1ObjectMeta;
  spec: PodMachineSpec;
  status?: PodMachineStatus;
}

export interface PodMachineList {
  apiVersion: typeof podMachineResource.apiVersion;
  kind: typeof podMachineResource.listKind;
  metadata: V1ListMeta;
  items: PodMachine[];
}
