// What the VolumeBackup controller does about one Machine: its finalizer while the Machine lives,
// and the backup between the deletion request and the Machine's release (pure).
import {
  type BackupPolicy,
  type Machine,
  VOLUME_BACKUP,
  VOLUME_BACKUP_FINALIZER,
  type VolumeBackup,
} from '../../apis/index.ts';
import { isBeingDeleted } from '../../runtime/client/object.ts';
import { type ConditionInput, findCondition } from '../../runtime/write/conditions.ts';
import { hasFinalizer } from '../../runtime/write/finalizers.ts';
import { backupLabels, backupName, skipRequested } from './names.ts';
import { READY, SKIPPED } from './progress.ts';

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

/** An inline Machine without volumes has nothing to back up, known before it stops. */
function inlineWithoutVolumes(machine: Machine): boolean {
  return machine.spec.infrastructureRef === undefined && (machine.spec.volumes ?? []).length === 0;
}

/** The VolumeBackup to record for a stopped Machine, with the claim names its status reports. */
export function backupFor(machine: Machine): VolumeBackup | undefined {
  const volumes = volumesToBackUp(machine);
  if (volumes.some((v) => !v.claimName)) return undefined;
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
 * Decides the next step for `machine`, given the VolumeBackup named after it (`backup`, if it exists).
 * A live Machine gets the finalizer iff its policy is OnDelete. A Machine being deleted is released
 * once its backup Completed (or when skipped, policy None, or it has no volumes); until then the plan
 * says in a condition what it waits for.
 */
export function planMachine(machine: Machine, backup: VolumeBackup | undefined): MachinePlan {
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
  const name = backupName(machine);
  if (backup && backup.spec.machineUID !== machine.metadata.uid) {
    return {
      action: 'wait',
      condition: condition(
        machine,
        'False',
        'BackupConflict',
        `VolumeBackup ${name} exists but belongs to another Machine (uid ${backup.spec.machineUID}); ${SKIP_HINT}`,
      ),
    };
  }
  const phase = backup?.status?.phase;
  if (phase === 'Completed') {
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
    if (!backup || findCondition(backup.status?.conditions, SKIPPED)?.status === 'True') {
      return {
        action: 'remove-finalizer',
        reason: 'BackupSkipped',
        message: backup
          ? `skip-backup annotation set; VolumeBackup ${name} records the skip`
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
  const desired = backupFor(machine);
  if (!desired) {
    return {
      action: 'wait',
      condition: condition(
        machine,
        'False',
        'BackupPending',
        'waiting for the Machine status to name the claim of every volume',
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
