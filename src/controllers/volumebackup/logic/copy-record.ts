// What to record on a finished copy Job before its pod is deleted: the pod's report, or why the copy
// is not proven (pure). The pod and its termination message go with the pod; the Job stays as the
// record of its attempt.

import {
  type CopyReport,
  copyTermination,
  describeManifest,
  jobOutcome,
  parseCopyReport,
  sameManifest,
} from '../../../apis/index.ts';
import { toMillis } from '../../../runtime/time.ts';
import type { CachedJob, CachedPod } from '../cached.ts';
import { copyRecorded } from './progress.ts';

/** How long a finished Job's pod may take to show how it ended, before the copy counts as unproven. */
export const POD_END_GRACE_MS = 60_000;
/** How often to look for a pod's end meanwhile (the controller does not watch copy pods). */
const POD_END_POLL_MS = 2000;
/** Failure messages kept on the Job: the end of the pod's words, where its last log lines are. */
const MAX_FAILURE_CHARS = 1024;

export type CopyRecord =
  /** The pod's end is not in the cache yet: look again shortly. */
  | { kind: 'wait'; retryInMs: number }
  /** A verified copy: record `value` (the report, as JSON). */
  | { kind: 'report'; value: string; report: CopyReport }
  /** Not proven: record `message`; `podMessage` is what the pod said, for a Warning Event. */
  | { kind: 'failure'; message: string; podMessage?: string };

function tail(text: string): string {
  const trimmed = text.trim();
  return trimmed.length <= MAX_FAILURE_CHARS ? trimmed : `...${trimmed.slice(-MAX_FAILURE_CHARS)}`;
}

/** How the copy container of `pods` ended, if any pod shows it. */
function terminated(pods: readonly CachedPod[]): { message: string } | undefined {
  for (const pod of pods) {
    const end = copyTermination(pod);
    if (end) return { message: end.message ?? '' };
  }
  return undefined;
}

/**
 * What to record on `job` (a copy Job) from its `pods`, or undefined when there is nothing to record
 * (it still runs, or its record is there). `now` bounds the wait for a pod's end.
 */
export function copyRecord(job: CachedJob, pods: readonly CachedPod[], now: number): CopyRecord | undefined {
  const outcome = jobOutcome(job);
  if (outcome === undefined || copyRecorded(job)) return undefined;
  const end = terminated(pods);
  if (!end) {
    const finishedAt = outcome.done === 'failed' ? outcome.failedAt : toMillis(job.status?.completionTime);
    const waited = now - (finishedAt ?? now);
    if (pods.length > 0 && waited < POD_END_GRACE_MS) {
      return { kind: 'wait', retryInMs: Math.max(Math.min(POD_END_POLL_MS, POD_END_GRACE_MS - waited), 1) };
    }
    return {
      kind: 'failure',
      message:
        pods.length > 0
          ? `the copy pod did not report how it ended within ${POD_END_GRACE_MS / 1000}s: the copy is not proven`
          : 'the copy pod was gone before its report was read: the copy is not proven',
    };
  }
  if (outcome.done === 'failed') {
    const said = tail(end.message);
    return said
      ? { kind: 'failure', message: said, podMessage: said }
      : { kind: 'failure', message: 'the copy pod left no message' };
  }
  const report = parseCopyReport(end.message);
  if (!report) {
    const said = tail(end.message);
    return {
      kind: 'failure',
      message: `the copy pod reported no manifest${said ? `: ${said}` : ''}: the copy is not proven`,
      ...(said ? { podMessage: said } : {}),
    };
  }
  if (!sameManifest(report.source, report.target)) {
    return {
      kind: 'failure',
      message: `the copy differs from its source: source ${describeManifest(report.source)}; copy ${describeManifest(report.target)}`,
    };
  }
  return { kind: 'report', value: JSON.stringify({ v: 1, ...report }), report };
}

/** A verified copy in words, with its throughput where the pod timed it. */
export function describeReport(volume: string, report: CopyReport): string {
  const { target, copyMs, manifestMs } = report;
  const timing =
    copyMs !== undefined && copyMs > 0
      ? `; copied in ${(copyMs / 1000).toFixed(1)}s (${(target.bytes / 1e6 / (copyMs / 1000)).toFixed(1)} MB/s)${
          manifestMs !== undefined ? `, manifests ${(manifestMs / 1000).toFixed(1)}s` : ''
        }`
      : '';
  return `volume ${volume}: ${describeManifest(target)} copied and verified${timing}`;
}
