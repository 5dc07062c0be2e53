// Where each volume of a VolumeBackup stands, from its copy Jobs: attempts, retries, copies (pure).

import { jobOutcome, parseCopyReport, sameManifest, type VolumeManifest } from '../../../apis/index.ts';
import { toMillis } from '../../../runtime/time.ts';
import type { CachedJob } from '../cached.ts';
import { ATTEMPT_LABEL, COPY_FAILURE_ANNOTATION, COPY_REPORT_ANNOTATION, VOLUME_LABEL } from '../names.ts';

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
