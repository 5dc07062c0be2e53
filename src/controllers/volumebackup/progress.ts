// Where a VolumeBackup stands, from its copy Jobs, and the status that follows (pure).

import {
  jobOutcome,
  parseCopyReport,
  sameManifest,
  type VolumeBackup,
  type VolumeBackupPhase,
  type VolumeBackupStatus,
  type VolumeManifest,
} from '../../apis/index.ts';
import { toMillis } from '../../runtime/time.ts';
import {
  type ConditionInput,
  findCondition,
  READY,
  rfc3339,
  STALLED,
  setCondition,
  setStalled,
} from '../../runtime/write/conditions.ts';
import type { CachedJob } from './cached.ts';
import {
  ATTEMPT_LABEL,
  backupClaimName,
  COPY_FAILURE_ANNOTATION,
  COPY_REPORT_ANNOTATION,
  VOLUME_LABEL,
} from './names.ts';

/** True once the Machine was let go without waiting for this backup (SKIP_BACKUP_ANNOTATION). */
export const SKIPPED = 'Skipped';

/** How often, and how patiently, a volume's copy is tried. */
export interface RetryPolicy {
  /** Copy Jobs per volume at most, the first one included. */
  maxAttempts: number;
  /** Pause after attempt `n` failed, before attempt n + 1 starts. */
  backoffMs(attempt: number): number;
}

export const DEFAULT_MAX_ATTEMPTS = 3;
export const DEFAULT_INITIAL_BACKOFF_MS = 10_000;
const MAX_BACKOFF_MS = 5 * 60_000;

/** Doubling pauses from `initialMs`, at most 5 minutes. */
export function exponentialRetry(maxAttempts: number, initialMs: number): RetryPolicy {
  return {
    maxAttempts,
    backoffMs: (attempt) => Math.min(initialMs * 2 ** (attempt - 1), MAX_BACKOFF_MS),
  };
}

export interface CopyAttempt {
  attempt: number;
  name: string;
  /**
   * `finishing`: the Job completed but its pod's report is not recorded on it yet. `succeeded` only
   * with a recorded report whose two manifests are equal.
   */
  outcome: 'running' | 'finishing' | 'succeeded' | 'failed';
  /** The verified copy's manifest, when succeeded. */
  manifest?: VolumeManifest;
  /** When a failed attempt failed (ms since the epoch). */
  failedAt?: number;
  /** Why it failed. */
  message?: string;
}

/** Whether a finished copy Job carries the record of its outcome (written before its pod goes). */
export function copyRecorded(job: CachedJob): boolean {
  const annotations = job.metadata?.annotations ?? {};
  return (
    annotations[COPY_REPORT_ANNOTATION] !== undefined || annotations[COPY_FAILURE_ANNOTATION] !== undefined
  );
}

/**
 * One copy Job as a CopyAttempt; undefined for a Job without a usable attempt label. A Job that
 * completed proves nothing by itself: it succeeded only once the report of its pod, recorded on it,
 * shows a copy equal to its source.
 */
export function copyAttempt(job: CachedJob): CopyAttempt | undefined {
  const attempt = Number(job.metadata?.labels?.[ATTEMPT_LABEL]);
  if (!Number.isInteger(attempt) || attempt < 1) return undefined;
  const name = job.metadata?.name ?? '';
  const outcome = jobOutcome(job);
  const failure = job.metadata?.annotations?.[COPY_FAILURE_ANNOTATION];
  if (outcome?.done === 'succeeded') {
    const failedAt = toMillis(job.status?.completionTime);
    const failed = (message: string): CopyAttempt => ({
      attempt,
      name,
      outcome: 'failed',
      message,
      ...(failedAt !== undefined ? { failedAt } : {}),
    });
    if (failure !== undefined) return failed(failure);
    const recorded = job.metadata?.annotations?.[COPY_REPORT_ANNOTATION];
    if (recorded === undefined) return { attempt, name, outcome: 'finishing' };
    const report = parseCopyReport(recorded);
    if (!report || !sameManifest(report.source, report.target)) {
      return failed('the recorded copy report does not prove an equal copy');
    }
    return { attempt, name, outcome: 'succeeded', manifest: report.target };
  }
  if (outcome?.done === 'failed') {
    const { failedAt } = outcome;
    const message = failure === undefined ? outcome.message : `${outcome.message}: ${failure}`;
    return { attempt, name, outcome: 'failed', message, ...(failedAt !== undefined ? { failedAt } : {}) };
  }
  return { attempt, name, outcome: 'running' };
}

/** The copy attempts of each volume, from the VolumeBackup's Jobs. */
export function attemptsByVolume(jobs: readonly CachedJob[]): Map<string, CopyAttempt[]> {
  const out = new Map<string, CopyAttempt[]>();
  for (const job of jobs) {
    const volume = job.metadata?.labels?.[VOLUME_LABEL];
    const attempt = copyAttempt(job);
    if (!volume || !attempt) continue;
    out.set(volume, [...(out.get(volume) ?? []), attempt]);
  }
  for (const list of out.values()) list.sort((a, b) => a.attempt - b.attempt);
  return out;
}

export type VolumeProgress =
  | { volume: string; state: 'copied'; manifest: VolumeManifest }
  | { volume: string; state: 'copying'; attempt: number; job: string }
  /** Start attempt `attempt` now (after `lastFailure` if it is a retry). */
  | { volume: string; state: 'start'; attempt: number; lastFailure?: string }
  | { volume: string; state: 'waiting-to-retry'; attempt: number; dueInMs: number; lastFailure: string }
  | { volume: string; state: 'failed'; message: string };

export function volumeProgress(
  volume: string,
  attempts: readonly CopyAttempt[],
  policy: RetryPolicy,
  now: number,
): VolumeProgress {
  const verified = attempts.find((a) => a.outcome === 'succeeded')?.manifest;
  if (verified) return { volume, state: 'copied', manifest: verified };
  const last = attempts.at(-1);
  if (!last) return { volume, state: 'start', attempt: 1 };
  if (last.outcome === 'running' || last.outcome === 'finishing') {
    return { volume, state: 'copying', attempt: last.attempt, job: last.name };
  }
  const lastFailure = `copy Job ${last.name} failed: ${last.message ?? 'no reason given'}`;
  if (last.attempt >= policy.maxAttempts) {
    return {
      volume,
      state: 'failed',
      message: `volume ${volume}: ${last.attempt} of ${policy.maxAttempts} copy attempts failed; last: ${lastFailure}`,
    };
  }
  const dueAt = (last.failedAt ?? now) + policy.backoffMs(last.attempt);
  const next = last.attempt + 1;
  if (dueAt > now)
    return { volume, state: 'waiting-to-retry', attempt: next, dueInMs: dueAt - now, lastFailure };
  return { volume, state: 'start', attempt: next, lastFailure };
}

export interface BackupFacts {
  /** Per spec volume, in spec order, after this reconcile's actions (a started Job is `copying`). */
  progress: readonly VolumeProgress[];
  /** Copy Jobs that exist, counting those this reconcile created. */
  jobCount: number;
  /** The Machine was let go without waiting (skip annotation). */
  skipped: boolean;
  /** Set once the backup's deadline passed: why it is Failed (see deadline.ts). */
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
export function computeBackupStatus(backup: VolumeBackup, facts: BackupFacts, now: Date): VolumeBackupStatus {
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
