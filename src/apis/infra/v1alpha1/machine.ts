// Machine: compute and storage realized by a provider object that follows the infrastructure
// contract (docs/contracts.md), named by spec.infrastructureRef or made from the inline fields.
import type { V1ListMeta, V1ObjectMeta } from '@kubernetes/client-node';
import { resourceOf } from '../../../runtime/client/resource.ts';
import type { ApiResource, Condition } from '../../meta.ts';
import type { InfrastructureAddress, InfrastructureCopyAs, InfrastructureReference } from '../contract/v1.ts';
import { INFRA_API_VERSION, INFRA_GROUP, INFRA_VERSION } from './group.ts';
import type { MachinePodFields } from './pod-fields.ts';

const machineResource = {
  group: INFRA_GROUP,
  version: INFRA_VERSION,
  apiVersion: INFRA_API_VERSION,
  kind: 'Machine',
  listKind: 'MachineList',
  plural: 'machines',
  singular: 'machine',
  shortNames: [],
  namespaced: true,
} as const satisfies ApiResource;
export const MACHINE = resourceOf<Machine>()(machineResource);

export type BackupPolicy = 'OnDelete' | 'None';

/** A volume of a VolumeBackup to fill a new claim from. */
export interface VolumeRestoreSource {
  /** Name of a VolumeBackup in the Machine's namespace. */
  volumeBackup: string;
  /** Name of the volume within that VolumeBackup. */
  volume: string;
}

export interface MachineVolume {
  /** DNS-1123 label, unique within the Machine. */
  name: string;
  /** A Kubernetes quantity such as "1Gi", or a number of bytes. */
  size: string | number;
  /** Absolute path in the container; unique within the Machine. */
  mountPath: string;
  storageClassName?: string;
  restoreFrom?: VolumeRestoreSource;
}

export interface MachineBackup {
  /** Default OnDelete: back every volume up before the Machine goes away. */
  policy?: BackupPolicy;
}

/** The pod fields (MachinePodFields) are inline-only, like image, and immutable. */
export interface MachineSpec extends MachinePodFields {
  /** The provider object that realizes this Machine, in its namespace. Exclusive with `image`. */
  infrastructureRef?: InfrastructureReference;
  /** Inline Machine: a PodMachine of the Machine's name is made from these fields. Immutable. */
  image?: string;
  command?: string[];
  args?: string[];
  /** Inline Machine only. Immutable after creation. */
  volumes?: MachineVolume[];
  /** Default {policy: OnDelete}. */
  backup?: MachineBackup;
}

export const MACHINE_PHASES = [
  'Pending',
  'Provisioning',
  'Running',
  'Stopping',
  'Stopped',
  'Failed',
] as const;
export type MachinePhase = (typeof MACHINE_PHASES)[number];

export interface MachineVolumeStatus {
  name: string;
  claimName: string;
  /** The claim's phase as last observed, e.g. Pending or Bound. */
  phase?: string;
}

export interface VolumeBackupReference {
  name: string;
  uid: string;
}

export interface MachineStatus {
  phase?: MachinePhase;
  ready?: boolean;
  /** The provider object in use: spec.infrastructureRef, or the PodMachine made for an inline Machine. */
  infrastructureRef?: InfrastructureReference;
  /** Copied from the provider object. */
  providerID?: string;
  addresses?: InfrastructureAddress[];
  /** Copied from the provider object: each volume's claim, which a backup copies. */
  volumes?: MachineVolumeStatus[];
  /**
   * Copied from the provider object: whom its pod runs as, so the copies of a backup run as that
   * where root is refused (VolumeBackup spec.copyAs). Absent: the provider does not say.
   */
  copyAs?: InfrastructureCopyAs;
  /**
   * The VolumeBackup the operator created for this Machine's deletion, by name and uid (written by
   * the machine-backup controller when it creates it). Only this backup can release the Machine.
   */
  volumeBackup?: VolumeBackupReference;
  observedGeneration?: number;
  conditions?: Condition[];
}

export interface Machine {
  apiVersion: typeof machineResource.apiVersion;
  kind: typeof machineResource.kind;
  metadata: V1ObjectMeta;
  spec: MachineSpec;
  status?: MachineStatus;
}

export interface MachineList {
  apiVersion: typeof machineResource.apiVersion;
  kind: typeof machineResource.listKind;
  metadata: V1ListMeta;
  items: Machine[];
}
