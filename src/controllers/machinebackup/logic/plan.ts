// What the machine-backup controller does about one Machine: its finalizer while the Machine lives,
// and the backup between the deletion request and the Machine's release (pure).
import {
  type BackupPolicy,
  copyIdentityOf,
  type Machine,
  reportableCopyAs,
  VOLUME_BACKUP,
  VOLUME_BACKUP_FINALIZER,
  type VolumeBackup,
  type VolumeBackupReference,
  type VolumeCopyIdentity,
} from '../../../apis/index.ts';
import { isBeingDeleted } from '../../../runtime/client/object.ts';
import { type ConditionInput, findCondition, READY } from '../../../runtime/write/conditions.ts';
import { hasFinalizer } from '../../../runtime/write/finalizers.ts';
import { backupName, RESTORABLE, SKIPPED, skipRequested } from '../../shared/volume-backups.ts';
import { backupLabels } from '../names.ts';

/**
 * The condition type this controller writes on Machines. The Machine controller owns the rest of
 * the Machine's status; this is the only entry this controller adds, changes or relies on.
 */
export const MACHINE_BACKUP_CONDITION = 'VolumeBackup';

export type MachineBackupReason =
  | 'BackupPending'
  | 'BackupInProgress'
  | 'BackupFailed'
  | 'BackupCompleted'
  | 'BackupSkipped'
  | 'BackupConflict';

export type ReleaseReason = 'PolicyNone' | 'BackupCompleted' | 'BackupSkipped' | 'NoVolumes';

export type MachinePlan =
  | { action: 'none' }
  | { action: 'add-finalizer' }
  /** Remove the finalizer; `condition` (if any) is written first, for a Machine that other finalizers keep. */
  | { action: 'remove-finalizer'; reason: ReleaseReason; message: string; condition?: ConditionInput }
  | { action: 'wait'; condition: ConditionInput }
  | { action: 'create-backup'; backup: VolumeBackup; condition: ConditionInput };

export function backupPolicy(machine: Machine): BackupPolicy {
  return machine.spec.backup?.policy ?? 'OnDelete';
}

function condition(
  machine: Machine,
  status: 'True' | 'False',
  reason: MachineBackupReason,
  message: string,
): ConditionInput {
  const generation = machine.metadata.generation;
  return {
    type: MACHINE_BACKUP_CONDITION,
    status,
    reason,
    message,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
}

/**
 * The volumes to back up: those the Machine's status reports (the Machine controller copies them from
 * its provider object, whatever its kind). An inline Machine also names them in its spec, and each of
 * those must be reported before a backup is recorded.
 */
function volumesToBackUp(machine: Machine): Array<{ name: string; claimName: string | undefined }> {
  const reported = machine.status?.volumes ?? [];
  const claims = new Map(reported.map((v) => [v.name, v.claimName]));
  const names = machine.spec.volumes?.map((v) => v.name) ?? reported.map((v) => v.name);
  return names.map((name) => ({ name, claimName: claims.get(name) }));
}

/**
 * A stopped Machine that never had volumes of its own: the Machine controller found no provider
 * object of it to stop (InfrastructureDeleted: none, or one it does not control, e.g. a PodMachine of
 * its name made by someone else) and its status never named a claim. Claims are the provider's, so
 * none of this Machine exists to copy, and releasing it deletes nothing (it owns nothing). A
 * provider that reported volumes once left them in the status, and they are backed up (or the backup
 * fails and waits) as usual.
 */
function neverHeldVolumes(machine: Machine): boolean {
  const infrastructure = findCondition(machine.status?.conditions, 'InfrastructureReady');
  return (
    machine.status?.phase === 'Stopped' &&
    infrastructure?.reason === 'InfrastructureDeleted' &&
    (machine.status?.volumes ?? []).length === 0
  );
}

/** An inline Machine without volumes has nothing to back up, known before it stops. */
function inlineWithoutVolumes(machine: Machine): boolean {
  return machine.spec.infrastructureRef === undefined && (machine.spec.volumes ?? []).length === 0;
}

/**
 * Whom the backup's copies run as where the namespace refuses root copies: what the provider reports
 * its pod runs as (the contract's copyAs, which the Machine controller copies into the Machine's
 * status). Undefined when it reports none (a pod that runs as root, a provider that does not say):
 * those copy as 65532. An inline Machine's status lacking it (written by an operator before the
 * contract had copyAs, whose PodMachine may be gone by now) falls back to what its PodMachine reports,
 * derived from the same immutable podSecurityContext.
 */
export function copyAsFor(machine: Machine): VolumeCopyIdentity | undefined {
  const reported = machine.status?.copyAs;
  if (reported) return { ...reported };
  if (machine.spec.infrastructureRef !== undefined) return undefined;
  return reportableCopyAs(copyIdentityOf(machine.spec));
}

/** The VolumeBackup to record for a stopped Machine, with the claim names its status reports. */
export function backupFor(machine: Machine): VolumeBackup | undefined {
  const volumes = volumesToBackUp(machine);
  if (volumes.some((v) => !v.claimName)) return undefined;
  const copyAs = copyAsFor(machine);
  return {
    apiVersion: VOLUME_BACKUP.apiVersion,
    kind: VOLUME_BACKUP.kind,
    metadata: {
      name: backupName(machine),
      namespace: machine.metadata.namespace,
      labels: backupLabels(machine),
    },
    spec: {
      machineName: machine.metadata.name ?? '',
      machineUID: machine.metadata.uid ?? '',
      ...(copyAs ? { copyAs } : {}),
      volumes: volumes.map((v) => ({ name: v.name, claimName: v.claimName! })),
    },
  };
}

function readyMessage(backup: VolumeBackup): string {
  return findCondition(backup.status?.conditions, READY)?.message ?? 'no progress reported yet';
}

const SKIP_HINT =
  'set the annotation infra.basicoperator.dev/skip-backup="true" on the Machine to delete it without a backup';

/**
 * Why a Completed VolumeBackup does not cover `machine`'s volumes, or undefined when it does: the
 * same volumes as the provider reports (names and claims, none missing, none more), each with a
 * verified copy.
 */
export function coverageGap(machine: Machine, backup: VolumeBackup): string | undefined {
  const wanted = volumesToBackUp(machine);
  const have = new Map(backup.spec.volumes.map((v) => [v.name, v.claimName]));
  for (const volume of wanted) {
    const claim = have.get(volume.name);
    if (claim === undefined) return `it has no volume ${volume.name}`;
    if (volume.claimName !== undefined && claim !== volume.claimName) {
      return `its volume ${volume.name} is claim ${claim}, the Machine's is ${volume.claimName}`;
    }
    if (!backup.status?.volumes?.find((v) => v.name === volume.name)?.manifest) {
      return `volume ${volume.name} has no verified copy`;
    }
  }
  const extra = backup.spec.volumes.find((v) => !wanted.some((w) => w.name === v.name));
  if (extra) return `it has volume ${extra.name}, which the Machine does not report`;
  return undefined;
}

/**
 * Why a Completed backup cannot be restored from any more (its Restorable condition, False: a backup
 * claim missing, being deleted or not Bound), or undefined when it can. The Machine's claims are the
 * only other copy: they stay until the backup's are whole again or a person decides.
 */
function notRestorable(backup: VolumeBackup): string | undefined {
  const restorable = findCondition(backup.status?.conditions, RESTORABLE);
  if (restorable?.status === 'True') return undefined;
  return restorable
    ? restorable.message
    : 'it does not say yet whether its backup claims can be restored from';
}

/**
 * Decides the next step for `machine`, given the VolumeBackup the operator recorded for it
 * (`recorded`, from the Machine's status) and the one of that name, or of the name it would get
 * (`backup`, if it exists). A live Machine gets the finalizer iff its policy is OnDelete. A Machine
 * being deleted is released once the backup the operator itself created Completed with a verified
 * copy of every volume (or when skipped, policy None, or it has no volumes); until then the plan
 * says in a condition what it waits for. Any other VolumeBackup of that name is a conflict.
 */
export function planMachine(
  machine: Machine,
  backup: VolumeBackup | undefined,
  recorded: VolumeBackupReference | undefined,
): MachinePlan {
  const held = hasFinalizer(machine, VOLUME_BACKUP_FINALIZER);
  const policy = backupPolicy(machine);
  if (!isBeingDeleted(machine)) {
    if (policy === 'OnDelete' && !held) return { action: 'add-finalizer' };
    if (policy === 'None' && held) {
      return { action: 'remove-finalizer', reason: 'PolicyNone', message: 'backup policy is None' };
    }
    return { action: 'none' };
  }
  if (!held) return { action: 'none' };
  if (policy === 'None') {
    return {
      action: 'remove-finalizer',
      reason: 'PolicyNone',
      message: 'backup policy is None; no backup taken',
    };
  }
  const name = backup?.metadata.name ?? recorded?.name ?? backupName(machine);
  // Identity, not names: only the VolumeBackup whose uid the operator recorded when it created it.
  const ours = backup !== undefined && recorded !== undefined && backup.metadata.uid === recorded.uid;
  const phase = backup?.status?.phase;
  const gap =
    ours && phase === 'Completed' ? (coverageGap(machine, backup) ?? notRestorable(backup)) : undefined;
  if (ours && phase === 'Completed' && gap === undefined) {
    return {
      action: 'remove-finalizer',
      reason: 'BackupCompleted',
      message: `VolumeBackup ${name} completed`,
      condition: condition(
        machine,
        'True',
        'BackupCompleted',
        `VolumeBackup ${name} completed: ${readyMessage(backup!)}`,
      ),
    };
  }
  if (skipRequested(machine)) {
    // A backup that is not the operator's cannot record the skip: the annotation alone lets go.
    if (
      !backup ||
      !ours ||
      gap !== undefined ||
      findCondition(backup.status?.conditions, SKIPPED)?.status === 'True'
    ) {
      return {
        action: 'remove-finalizer',
        reason: 'BackupSkipped',
        message: backup
          ? ours && gap === undefined
            ? `skip-backup annotation set; VolumeBackup ${name} records the skip`
            : `skip-backup annotation set; VolumeBackup ${name} is not this Machine's backup`
          : 'skip-backup annotation set; no backup taken',
        condition: condition(
          machine,
          'True',
          'BackupSkipped',
          'deleted without a backup: the skip-backup annotation is set',
        ),
      };
    }
    return {
      action: 'wait',
      condition: condition(
        machine,
        'False',
        'BackupSkipped',
        `skip-backup annotation set; waiting for VolumeBackup ${name} to record the skip`,
      ),
    };
  }
  if (backup && !ours) {
    const expected = recorded
      ? `the operator recorded VolumeBackup ${recorded.name} (uid ${recorded.uid}) for it`
      : "the operator has recorded no VolumeBackup for it (if the operator was stopped between creating one and recording it, or an older version made it, it may be the operator's own, but nothing proves it)";
    return {
      action: 'wait',
      condition: condition(
        machine,
        'False',
        'BackupConflict',
        `VolumeBackup ${name} (uid ${backup.metadata.uid}, for Machine ${backup.spec.machineName ?? 'none'} uid ${backup.spec.machineUID ?? 'none'}) was not created by the operator for this deletion of Machine ${machine.metadata.name} (uid ${machine.metadata.uid}); ${expected}. It is never taken as this Machine's backup: delete it to let the operator back the Machine up, or ${SKIP_HINT}`,
      ),
    };
  }
  if (gap !== undefined) {
    return {
      action: 'wait',
      condition: condition(
        machine,
        'False',
        'BackupConflict',
        `VolumeBackup ${name} completed but does not prove a copy of this Machine's volumes: ${gap}. The Machine is kept; delete the VolumeBackup to back it up again, or ${SKIP_HINT}`,
      ),
    };
  }
  if (backup) {
    if (phase === 'Failed') {
      return {
        action: 'wait',
        condition: condition(
          machine,
          'False',
          'BackupFailed',
          `VolumeBackup ${name} failed: ${readyMessage(backup)}. The Machine is kept; delete the VolumeBackup to try again, or ${SKIP_HINT}`,
        ),
      };
    }
    return {
      action: 'wait',
      condition: condition(
        machine,
        'False',
        'BackupInProgress',
        `VolumeBackup ${name} is ${phase ?? 'Pending'}: ${readyMessage(backup)}`,
      ),
    };
  }
  if (inlineWithoutVolumes(machine)) {
    return {
      action: 'remove-finalizer',
      reason: 'NoVolumes',
      message: 'the Machine has no volumes to back up',
    };
  }
  if (machine.status?.phase !== 'Stopped') {
    return {
      action: 'wait',
      condition: condition(
        machine,
        'False',
        'BackupPending',
        `waiting for the Machine to stop (phase ${machine.status?.phase ?? 'unknown'}) before backing up its volumes`,
      ),
    };
  }
  if (volumesToBackUp(machine).length === 0) {
    return {
      action: 'remove-finalizer',
      reason: 'NoVolumes',
      message: 'the Machine stopped and its provider reports no volumes to back up',
    };
  }
  if (neverHeldVolumes(machine)) {
    return {
      action: 'remove-finalizer',
      reason: 'NoVolumes',
      message:
        'the Machine stopped; no provider object of the Machine holds its volumes and its status never named a claim, so nothing of it is left to back up',
    };
  }
  const desired = backupFor(machine);
  if (!desired) {
    return {
      action: 'wait',
      condition: condition(
        machine,
        'False',
        'BackupPending',
        `waiting for the Machine status to name the claim of every volume (its provider reports them); ${SKIP_HINT}`,
      ),
    };
  }
  return {
    action: 'create-backup',
    backup: desired,
    condition: condition(
      machine,
      'False',
      'BackupInProgress',
      `VolumeBackup ${name} created; copying volumes`,
    ),
  };
}
