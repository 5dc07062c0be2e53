// A VolumeBackup's status, from where its volumes stand (logic/progress.ts) and what else the
// controller found out (pure).
import type { VolumeBackup, VolumeBackupPhase, VolumeBackupStatus } from '../../apis/index.ts';
import {
  type ConditionInput,
  findCondition,
  READY,
  rfc3339,
  STALLED,
  setCondition,
  setStalled,
} from '../../runtime/write/conditions.ts';
import { SKIPPED } from '../shared/volume-backups.ts';
import type { VolumeProgress } from './logic/progress.ts';
import { backupClaimName } from './names.ts';

export interface BackupFacts {
  /** Per spec volume, in spec order, after this reconcile's actions (a started Job is `copying`). */
  progress: readonly VolumeProgress[];
  /** Copy Jobs that exist, counting those this reconcile created. */
  jobCount: number;
  /** The Machine was let go without waiting (skip annotation). */
  skipped: boolean;
  /** Set once the backup's deadline passed: why it is Failed (see logic/deadline.ts). */
  deadlineExceeded?: string;
  generation?: number;
}

export function isTerminal(phase: VolumeBackupPhase | undefined): boolean {
  return phase === 'Completed' || phase === 'Failed';
}

function nextPhase(current: VolumeBackupPhase | undefined, facts: BackupFacts): VolumeBackupPhase {
  if (isTerminal(current)) return current!;
  if (facts.progress.every((p) => p.state === 'copied')) return 'Completed';
  if (facts.skipped) return 'Failed';
  if (facts.deadlineExceeded !== undefined) return 'Failed';
  if (facts.progress.some((p) => p.state === 'failed')) return 'Failed';
  return facts.jobCount > 0 ? 'Running' : 'Pending';
}

function readyCondition(phase: VolumeBackupPhase, facts: BackupFacts, skippedNow: boolean): ConditionInput {
  const total = facts.progress.length;
  const copied = facts.progress.filter((p) => p.state === 'copied').length;
  const base = {
    type: READY,
    ...(facts.generation !== undefined ? { observedGeneration: facts.generation } : {}),
  };
  if (phase === 'Completed') {
    return {
      ...base,
      status: 'True',
      reason: 'BackupCompleted',
      message: `all ${total} volumes copied and verified`,
    };
  }
  if (phase === 'Failed') {
    if (skippedNow) {
      return {
        ...base,
        status: 'False',
        reason: 'BackupSkipped',
        message: `abandoned after ${copied} of ${total} volumes: the Machine was deleted without a backup`,
      };
    }
    if (facts.deadlineExceeded !== undefined) {
      return { ...base, status: 'False', reason: 'DeadlineExceeded', message: facts.deadlineExceeded };
    }
    const failures = facts.progress.flatMap((p) => (p.state === 'failed' ? [p.message] : []));
    return { ...base, status: 'False', reason: 'BackupFailed', message: failures.join('; ') || 'failed' };
  }
  const copying = facts.progress.flatMap((p) =>
    p.state === 'copying' ? [`${p.volume} (Job ${p.job})`] : [],
  );
  const retrying = facts.progress.flatMap((p) =>
    p.state === 'waiting-to-retry'
      ? [`volume ${p.volume}: ${p.lastFailure}; retrying in ${Math.ceil(p.dueInMs / 1000)}s`]
      : [],
  );
  const message = [
    `copied ${copied} of ${total} volumes`,
    ...(copying.length > 0 ? [`copying ${copying.join(', ')}`] : []),
    ...retrying,
  ].join('; ');
  if (phase === 'Running') return { ...base, status: 'False', reason: 'BackupInProgress', message };
  return { ...base, status: 'False', reason: 'BackupPending', message: `waiting to start; ${message}` };
}

/**
 * The next status of `backup`. Completed and Failed are final: later Job changes do not reopen
 * them (nor change their Ready condition), but a skip is still recorded on a Failed backup.
 */
export function computeStatus(backup: VolumeBackup, facts: BackupFacts, now: Date): VolumeBackupStatus {
  const current = backup.status;
  const phase = nextPhase(current?.phase, facts);
  // A skip is news only for a backup that had not completed; a Completed one needs no excuse.
  const skippedNow = facts.skipped && phase !== 'Completed';
  let conditions = current?.conditions;
  if (!isTerminal(current?.phase)) {
    const ready = readyCondition(phase, facts, skippedNow);
    conditions = setCondition(conditions, ready, now);
    // Failed is final (attempts or deadline used up, or abandoned): kstatus's Stalled, Ready's reason.
    conditions = setStalled(conditions, phase === 'Failed' ? ready : undefined, facts.generation, now);
  }
  if (skippedNow) {
    conditions = setCondition(
      conditions,
      {
        type: SKIPPED,
        status: 'True',
        reason: 'SkipAnnotation',
        message: `Machine ${backup.spec.machineName} was deleted without waiting for this backup (annotation infra.basicoperator.dev/skip-backup=true)`,
        ...(facts.generation !== undefined ? { observedGeneration: facts.generation } : {}),
      },
      now,
    );
  }
  const startTime = current?.startTime ?? rfc3339(now);
  const completionTime = current?.completionTime ?? (isTerminal(phase) ? rfc3339(now) : undefined);
  return {
    phase,
    startTime,
    ...(completionTime !== undefined ? { completionTime } : {}),
    volumes: backup.spec.volumes.map((v) => {
      const copied = facts.progress.find((p) => p.volume === v.name && p.state === 'copied');
      const manifest =
        copied?.state === 'copied'
          ? copied.manifest
          : current?.volumes?.find((c) => c.name === v.name)?.manifest;
      return {
        name: v.name,
        backupClaimName: backupClaimName(backup, v.name),
        ...(manifest ? { manifest } : {}),
      };
    }),
    attempts: Math.max(current?.attempts ?? 0, facts.jobCount),
    ...(facts.generation !== undefined ? { observedGeneration: facts.generation } : {}),
    conditions: conditions ?? [],
  };
}

/**
 * A backup that became Failed before the controller set Stalled (an older version): the same status
 * with Stalled taken from its Ready condition and observedGeneration, so kstatus reads it as Failed.
 * Undefined when there is nothing to add.
 */
export function stalledAfterTheFact(
  status: VolumeBackupStatus | undefined,
  generation: number | undefined,
  now: Date,
): VolumeBackupStatus | undefined {
  if (status?.phase !== 'Failed' || findCondition(status.conditions, STALLED)) return undefined;
  const ready = findCondition(status.conditions, READY);
  return {
    ...status,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    conditions: setStalled(
      status.conditions,
      { reason: ready?.reason ?? 'BackupFailed', message: ready?.message || 'the backup failed' },
      generation,
      now,
    ),
  };
}
