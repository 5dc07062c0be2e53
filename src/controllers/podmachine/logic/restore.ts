// Where the restore of one volume stands, from what the cache shows (pure). A restore is done only
// when the copy pod's report proves the restored tree equal to what the backup recorded; the verdict
// is recorded on the claim before the pod that carries the report is deleted.
import {
  copyTermination,
  describeManifest,
  jobOutcome,
  type MachineVolume,
  parseCopyReport,
  restoreSource,
  sameManifest,
  type VolumeBackup,
  type VolumeManifest,
  type VolumeRestoreSource,
} from '../../../apis/index.ts';
import type { CachedClaim, CachedJob, CachedPod } from '../cached.ts';
import { RESTORE_FAILURE_ANNOTATION, RESTORED_FROM_ANNOTATION, restoredFromValue } from '../names.ts';

/** How much of a failed copy's last words a message carries (its end: the last lines say why). */
const COPY_OUTPUT_MAX_CHARS = 1500;

type FailureReason =
  | 'BackupFailed'
  | 'BackupVolumeNotFound'
  | 'BackupClaimLost'
  | 'RestoreFailed'
  | 'RestoreVerificationFailed';

export type RestoreState =
  /** The volume has no restoreFrom: nothing to wait for. */
  | { kind: 'none' }
  /** The claim carries RESTORED_FROM_ANNOTATION: done, whatever happens to the Job or the backup. */
  | { kind: 'restored' }
  /**
   * The restore Job succeeded and its copy pod's report proves the restored tree (`manifest`):
   * mark the claim restored, then release the pod. `checked`: against the backup's recorded
   * manifest; false for a backup recorded before copies were verified (the mover still checked the
   * copy against its source).
   */
  | { kind: 'verified'; manifest: VolumeManifest; checked: boolean; backup: string }
  /** The backup is ready: create the restore Job from this backup claim, expecting `manifest`. */
  | { kind: 'start-job'; backupClaimName: string; manifest?: VolumeManifest }
  | { kind: 'restoring'; message: string }
  /** Waiting for the VolumeBackup to appear or complete (transient): the PodMachine stays Pending. */
  | { kind: 'waiting'; reason: 'BackupNotFound' | 'WaitingForBackup'; message: string }
  /** Nothing will fix this without a change by a person: a terminal failure. */
  | {
      kind: 'failed';
      reason: FailureReason;
      message: string;
      /** An object of someone else holds the restore Job's name. */
      foreign?: true;
      /**
       * The finished restore Job (its uid) whose failure is not on the claim yet: record it
       * (recordFailure) before its pods, and their termination messages, are deleted.
       */
      unrecorded?: string;
      /** The failed copy pod's last words (its termination message), for a Warning Event. */
      copyOutput?: string;
    };

/** What the controller knows of one restoring volume. */
export interface RestoreObservation {
  claim: CachedClaim | undefined;
  backup: VolumeBackup | undefined;
  /** The restore Job, when one of ours exists. */
  job: CachedJob | undefined;
  /** The Job's pods: the cache's, or a live list's when the cache has none with its report. */
  jobPods: readonly CachedPod[];
  /** The backup claims of the namespace, by name (restoreSource). */
  backupClaim: (name: string) => CachedClaim | undefined;
}

/** A finished restore's failure as recorded on the claim (RESTORE_FAILURE_ANNOTATION). */
interface RecordedFailure {
  job: string;
  reason: FailureReason;
  message: string;
}

const FAILURE_REASONS: ReadonlySet<string> = new Set<FailureReason>([
  'RestoreFailed',
  'RestoreVerificationFailed',
]);

/** The annotation value that records `failure` of the Job of uid `job`. */
export function failureRecord(job: string, failure: { reason: FailureReason; message: string }): string {
  return JSON.stringify({ job, reason: failure.reason, message: failure.message });
}

/** The failure recorded on `claim` for the Job of uid `job`, if any (a record of another Job is stale). */
function recordedFailure(claim: CachedClaim | undefined, job: string): RecordedFailure | undefined {
  const value = claim?.metadata?.annotations?.[RESTORE_FAILURE_ANNOTATION];
  if (!value || !job) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { job: uid, reason, message } = parsed as Record<string, unknown>;
  if (uid !== job || typeof reason !== 'string' || !FAILURE_REASONS.has(reason)) return undefined;
  return { job, reason: reason as FailureReason, message: typeof message === 'string' ? message : '' };
}

/** Whether the claim holds the restored data of `volume`'s source (RESTORED_FROM_ANNOTATION). */
export function isRestored(volume: MachineVolume, claim: CachedClaim | undefined): boolean {
  const source = volume.restoreFrom;
  return (
    source !== undefined &&
    claim?.metadata?.annotations?.[RESTORED_FROM_ANNOTATION] === restoredFromValue(source)
  );
}

/** Whether the outcome of the finished `job` is on the claim: its pods may go. */
export function outcomeRecorded(
  volume: MachineVolume,
  claim: CachedClaim | undefined,
  job: CachedJob,
): boolean {
  return isRestored(volume, claim) || recordedFailure(claim, job.metadata?.uid ?? '') !== undefined;
}

const newestFirst = (a: CachedPod, b: CachedPod) =>
  String(b.metadata?.creationTimestamp ?? '').localeCompare(String(a.metadata?.creationTimestamp ?? ''));

/** The pod whose copy ended as the Job did (exit 0 for a success), newest first; its report is read. */
function reportingPod(succeeded: boolean, pods: readonly CachedPod[]): CachedPod | undefined {
  return [...pods].sort(newestFirst).find((pod) => {
    const ended = copyTermination(pod);
    return ended !== undefined && (ended.exitCode === 0) === succeeded;
  });
}

/**
 * Whether the cache cannot say how the finished `job` ended: its outcome is not recorded on the claim
 * and no cached pod of it shows the copy's end (the pods' watch may be behind the Job's, or the pods
 * are gone). The caller reads the claim and the pods live before judging.
 */
export function needsLiveRead(
  volume: MachineVolume,
  claim: CachedClaim | undefined,
  job: CachedJob | undefined,
  pods: readonly CachedPod[],
): boolean {
  if (!job || isRestored(volume, claim)) return false;
  const outcome = jobOutcome(job);
  if (!outcome || outcomeRecorded(volume, claim, job)) return false;
  return reportingPod(outcome.done === 'succeeded', pods) === undefined;
}

/** The end of a copy pod's termination message: at most COPY_OUTPUT_MAX_CHARS, whole lines. */
function lastWords(message: string | undefined): string | undefined {
  const text = message?.trim();
  if (!text) return undefined;
  if (text.length <= COPY_OUTPUT_MAX_CHARS) return text;
  const tail = text.slice(-COPY_OUTPUT_MAX_CHARS);
  const newline = tail.indexOf('\n');
  return `...${newline >= 0 && newline < tail.length - 1 ? tail.slice(newline + 1) : tail}`;
}

export function restoreState(volume: MachineVolume, observed: RestoreObservation): RestoreState {
  const source = volume.restoreFrom;
  if (!source) return { kind: 'none' };
  const { claim, backup, job } = observed;
  if (isRestored(volume, claim)) return { kind: 'restored' };
  const what = `volume ${volume.name} restores from VolumeBackup ${source.volumeBackup}`;
  if (job) {
    const outcome = jobOutcome(job);
    const name = job.metadata?.name ?? '';
    if (!outcome) return { kind: 'restoring', message: `${what}: copying data (Job ${name})` };
    const uid = job.metadata?.uid ?? '';
    const recorded = recordedFailure(claim, uid);
    if (recorded) return { kind: 'failed', reason: recorded.reason, message: recorded.message };
    if (outcome.done === 'failed') {
      const output = lastWords(copyTermination(reportingPod(false, observed.jobPods) ?? {})?.message);
      return {
        kind: 'failed',
        reason: 'RestoreFailed',
        message: `${what}: restore Job ${name} failed (${outcome.message})${output ? `; its copy pod said: ${output}` : ''}; delete the Job to try again`,
        unrecorded: uid,
        ...(output ? { copyOutput: output } : {}),
      };
    }
    return verify(`${what}: restore Job ${name} succeeded, but`, source, observed, uid);
  }
  const offered = restoreSource(what, source, backup, observed.backupClaim);
  if (offered.kind !== 'ready') return offered;
  return {
    kind: 'start-job',
    backupClaimName: offered.backupClaimName,
    ...(offered.manifest ? { manifest: offered.manifest } : {}),
  };
}

/** A succeeded restore Job: its copy pod's report against the backup's recorded manifest. */
function verify(
  what: string,
  source: VolumeRestoreSource,
  observed: RestoreObservation,
  job: string,
): RestoreState {
  const unproven = (why: string): RestoreState => ({
    kind: 'failed',
    reason: 'RestoreVerificationFailed',
    message: `${what} ${why}; the pod is not started on unproven data; delete the Job to try again`,
    unrecorded: job,
  });
  const pod = reportingPod(true, observed.jobPods);
  if (!pod) return unproven('its copy pod is gone and left no report of what it restored');
  const message = copyTermination(pod)?.message;
  const report = parseCopyReport(message);
  if (!report) {
    const said = message?.trim() ? `"${lastWords(message)?.slice(0, 200)}"` : 'no termination message';
    return unproven(`the report of its copy pod ${pod.metadata?.name} cannot be read (${said})`);
  }
  const { backup } = observed;
  const backupName = source.volumeBackup;
  const backedUp = backup?.status?.volumes?.find((v) => v.name === source.volume);
  if (!backedUp) {
    return unproven(
      `VolumeBackup ${backupName} ${backup ? `no longer lists volume ${source.volume}` : 'no longer exists'}, so the restored tree cannot be checked against its manifest`,
    );
  }
  if (!backedUp.manifest) {
    // A backup from before copies were verified: the mover checked the copy against its source.
    if (!sameManifest(report.source, report.target)) {
      return unproven(
        `the restored tree differs from the backup claim it was copied from: source ${describeManifest(report.source)}, restored ${describeManifest(report.target)}`,
      );
    }
    return { kind: 'verified', manifest: report.target, checked: false, backup: backupName };
  }
  if (!sameManifest(report.target, backedUp.manifest)) {
    return unproven(
      `the restored tree does not match the backup: expected ${describeManifest(backedUp.manifest)}, found ${describeManifest(report.target)}`,
    );
  }
  return { kind: 'verified', manifest: report.target, checked: true, backup: backupName };
}
