// VolumeBackup: copies of a deleted Machine's volumes. Not owned by the Machine, so it outlives it.
import type { V1ListMeta, V1ObjectMeta } from '@kubernetes/client-node';
import { resourceOf } from '../../../runtime/client/resource.ts';
import type { ApiResource, Condition } from '../../meta.ts';
import { INFRA_API_VERSION, INFRA_GROUP, INFRA_VERSION } from './group.ts';

const volumeBackupResource = {
  group: INFRA_GROUP,
  version: INFRA_VERSION,
  apiVersion: INFRA_API_VERSION,
  kind: 'VolumeBackup',
  listKind: 'VolumeBackupList',
  plural: 'volumebackups',
  singular: 'volumebackup',
  shortNames: ['vb'],
  namespaced: true,
} as const satisfies ApiResource;
export const VOLUME_BACKUP = resourceOf<VolumeBackup>()(volumeBackupResource);

export interface BackupSourceVolume {
  /** The volume's name in the Machine. */
  name: string;
  /** The Machine's claim holding the volume. */
  claimName: string;
}

/**
 * Whom a copy runs as where it may not run as root: the workload's user and groups, so files of
 * theirs can be read and made again with their owners (docs/machine-and-volumebackup.md).
 */
export interface VolumeCopyIdentity {
  /** Not root: a copy that may run as root does. */
  runAsUser: number;
  runAsGroup: number;
  /**
   * The workload pod's fsGroup: a group of the copy too, and the kubelet prepares the target's root
   * with it as it prepared the workload's volume.
   */
  fsGroup?: number;
}

/**
 * Immutable. `machineName` and `machineUID` go together: a backup of that Machine's claims (only the
 * operator records those, see docs/machine-and-volumebackup.md), or, both absent, a standalone
 * backup of any claims of the namespace. `copyAs`: whom the copies run as where Pod Security refuses
 * root (default: uid and gid 65532, no fsGroup).
 */
export interface VolumeBackupSpec {
  machineName?: string;
  machineUID?: string;
  copyAs?: VolumeCopyIdentity;
  volumes: BackupSourceVolume[];
}

export const VOLUME_BACKUP_PHASES = ['Pending', 'Running', 'Completed', 'Failed'] as const;
export type VolumeBackupPhase = (typeof VOLUME_BACKUP_PHASES)[number];

/** What the copy pod measured of a tree (src/mover/manifest.ts): the proof that a copy is whole. */
export interface VolumeManifest {
  /** Names of regular files (each name of a hard-linked file counts). */
  files: number;
  /** Their sizes added up, each inode once. */
  bytes: number;
  /** `sha256:<hex>` over every entry's path, type, mode, owner, group, size, content and link target. */
  digest: string;
}

export interface BackedUpVolume {
  name: string;
  /** The claim, owned by the VolumeBackup, that holds the copy. */
  backupClaimName: string;
  /**
   * The verified copy: the backup claim's manifest, equal to the source's when it was copied. Set
   * once the volume is copied; a restore checks the restored tree against it.
   */
  manifest?: VolumeManifest;
}

export interface VolumeBackupStatus {
  phase?: VolumeBackupPhase;
  /** RFC 3339. */
  startTime?: string;
  /** RFC 3339. */
  completionTime?: string;
  volumes?: BackedUpVolume[];
  attempts?: number;
  observedGeneration?: number;
  conditions?: Condition[];
}

export interface VolumeBackup {
  apiVersion: typeof volumeBackupResource.apiVersion;
  kind: typeof volumeBackupResource.kind;
  metadata: V1ObjectMeta;
  spec: VolumeBackupSpec;
  status?: VolumeBackupStatus;
}

export interface VolumeBackupList {
  apiVersion: typeof volumeBackupResource.apiVersion;
  kind: typeof volumeBackupResource.listKind;
  metadata: V1ListMeta;
  items: VolumeBackup[];
}
