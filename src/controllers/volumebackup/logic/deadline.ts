// The VolumeBackup deadline: when a backup must have completed, the copy Jobs' own deadlines, and
// what to say about a volume that did not make it (pure).

import type { VolumeBackup } from '../../../apis/index.ts';
import { toMillis } from '../../../runtime/client/kube-client.ts';
import type { CachedJob, CachedPod } from '../cached.ts';
import type { VolumeProgress } from './progress.ts';

/** When `backup` must have completed: its startTime (or `now`, before it has one) plus `deadlineMs`. */
export function deadlineAt(backup: VolumeBackup, deadlineMs: number, now: number): number {
  return (toMillis(backup.status?.startTime) ?? now) + deadlineMs;
}

/**
 * How long after the backup's deadline a copy Job's own deadline falls. The backup's deadline decides
 * and says why (the pod's scheduling or image problem); the Job's is only a backstop, since when it
 * fires first the Job controller deletes the pod, and with it the evidence of why it never ran.
 */
export const JOB_DEADLINE_MARGIN_MS = 30_000;

/** A copy Job's activeDeadlineSeconds: what is left of the backup's deadline plus the margin. */
export function jobDeadlineSeconds(deadline: number, now: number): number {
  return Math.max(1, Math.ceil((deadline + JOB_DEADLINE_MARGIN_MS - now) / 1000));
}

/** "1h", "90s", "2m30s": a short form of a duration for messages. */
export function formatDuration(ms: number): string {
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const parts = [h ? `${h}h` : '', m ? `${m}m` : '', s || total === 0 ? `${s}s` : ''];
  return parts.join('');
}

/** Why a copy Job has no pod or its pod does not finish, from the Job, its pods and its FailedCreate Event. */
export function describeJob(
  job: CachedJob,
  pods: readonly CachedPod[],
  failedCreate: string | undefined,
): string {
  const name = job.metadata?.name ?? '';
  const pod = pods[0];
  if (!pod) {
    return failedCreate
      ? `copy Job ${name} could not create its pod: ${failedCreate}`
      : `copy Job ${name} has no pod (see kubectl describe job ${name})`;
  }
  const podName = pod.metadata?.name ?? '';
  const phase = pod.status?.phase ?? 'Pending';
  const unscheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
  if (unscheduled) {
    return `copy pod ${podName} is ${phase}, not scheduled: ${unscheduled.message ?? unscheduled.reason ?? 'no reason given'}`;
  }
  const waiting = pod.status?.containerStatuses?.find((c) => c.state?.waiting)?.state?.waiting;
  if (waiting)
    return `copy pod ${podName} is ${phase}: ${[waiting.reason, waiting.message].filter(Boolean).join(': ')}`;
  return `copy pod ${podName} is ${phase} and has not finished`;
}

/** Whether a Job never had a pod (the case in which its FailedCreate Event says why). */
export function neverHadPods(job: CachedJob, pods: readonly CachedPod[]): boolean {
  const s = job.status;
  return pods.length === 0 && !s?.active && !s?.succeeded && !s?.failed && !s?.ready;
}

/**
 * The Ready message of a backup that ran out of time: the deadline, and for each volume not copied
 * where it stood (`jobState` describes the volume's latest Job, when it has one).
 */
export function deadlineMessage(
  deadlineMs: number,
  progress: readonly VolumeProgress[],
  jobState: (volume: string) => string | undefined,
): string {
  const stuck = progress.flatMap((p) => {
    if (p.state === 'copied') return [];
    const state = jobState(p.volume);
    switch (p.state) {
      case 'copying':
        return [`volume ${p.volume}: ${state ?? `copy Job ${p.job} still running`}`];
      case 'waiting-to-retry':
        return [`volume ${p.volume}: ${p.lastFailure}${state ? ` (${state})` : ''}`];
      case 'failed':
        return [p.message];
      case 'start':
        return [
          `volume ${p.volume}: ${p.lastFailure ?? 'no copy Job could be started'}${state ? ` (${state})` : ''}`,
        ];
    }
    return [];
  });
  return `not completed within the deadline of ${formatDuration(deadlineMs)} (--volume-copy-deadline): ${stuck.join('; ')}`;
}
