import {
  type BackupSourceVolume,
  copyPodProbe,
  copyPrivilege,
  describeCopyPrivilege,
  type Machine,
  VOLUME_BACKUP,
  type VolumeBackup,
  type VolumeBackupPhase,
  type VolumeBackupStatus,
} from '../../apis/index.ts';
import type { Informer } from '../../runtime/cache/informer.ts';
import { isNotFound } from '../../runtime/client/errors.ts';
import type { KubeClient } from '../../runtime/client/kube-client.ts';
import { toMillis } from '../../runtime/client/kube-client.ts';
import { controllerRefOf, isBeingDeleted, type KubeObject } from '../../runtime/client/object.ts';
import { CoreTypes } from '../../runtime/client/resource.ts';
import type { ReconcileContext, Reconciler, Request, Result } from '../../runtime/controller/reconciler.ts';
import type { ObjectEventRecorder } from '../../runtime/events/index.ts';
import { errorMessage } from '../../runtime/log.ts';
import { podRefusal } from '../../runtime/write/admission.ts';
import { ensureChild, getOrUndefined, releaseFinishedJobPods } from '../../runtime/write/children.ts';
import { findCondition, READY, setCondition } from '../../runtime/write/conditions.ts';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../../runtime/write/finalizers.ts';
import { isControlledBy } from '../../runtime/write/owner-refs.ts';
import { RESTORABLE, skipRequested } from '../shared/volume-backups.ts';
import type { CachedClaim, CachedJob, CachedPod } from './cached.ts';
import { mayReleaseClaim, restorableCondition } from './logic/backup-claims.ts';
import { copyJobTemplate, desiredBackupClaim, desiredCopyJob } from './logic/children.ts';
import { copyRecord, describeReport } from './logic/copy-record.ts';
import {
  deadlineAt,
  deadlineMessage,
  describeJob,
  jobDeadlineSeconds,
  neverHadPods,
} from './logic/deadline.ts';
import {
  attemptsByVolume,
  copyRecorded,
  type RetryPolicy,
  type VolumeProgress,
  volumeProgress,
} from './logic/progress.ts';
import {
  BACKUP_CLAIM_FINALIZER,
  backupClaimName,
  COPY_FAILURE_ANNOTATION,
  COPY_REPORT_ANNOTATION,
  VOLUME_LABEL,
} from './names.ts';
import { computeStatus, isTerminal, stalledAfterTheFact } from './status.ts';

export interface VolumeBackupDeps {
  client: KubeClient;
  machines: Informer<Machine>;
  claims: Informer<CachedClaim>;
  jobs: Informer<CachedJob>;
  pods: Informer<CachedPod>;
  events: ObjectEventRecorder<VolumeBackup>;
  /** Image of the copy Jobs (the manager's --backup-job-image). */
  backupJobImage: string;
  retry: RetryPolicy;
  /** How long a VolumeBackup may take from its startTime (see logic/deadline.ts). */
  deadlineMs: number;
  now?: () => Date;
}

/** The fields of an events.k8s.io/v1 Event read here. */
interface FailedCreateEvent extends KubeObject {
  note?: string;
  eventTime?: string | Date;
  regarding?: { uid?: string };
}

function eventTime(e: FailedCreateEvent): number {
  return toMillis(e.eventTime) ?? toMillis(e.metadata?.creationTimestamp) ?? 0;
}
const SOURCE_GONE_HINT =
  'nothing left to copy (a foreground cascading deletion of the Machine deletes its claims first; delete Machines with the default background propagation)';
/** How soon to look again when a claim of ours is still held by a namesake being deleted. */
const NAMESAKE_RETRY_MS = 2000;

type ClaimCheck = { ok: true } | { ok: false; failed: string } | { ok: false; retryInMs: number };

/**
 * Carries a VolumeBackup out: one backup claim per volume (owned by the VolumeBackup, so it lives as
 * long as the backup does) and copy Jobs into it, retried with growing pauses up to a limit. Reports
 * Pending, Running, then Completed or Failed; both are final. It also records, as the `Skipped`
 * condition, that the Machine was let go without waiting (the skip-backup annotation).
 */
export class VolumeBackupReconciler implements Reconciler<VolumeBackup> {
  private readonly deps: VolumeBackupDeps;

  constructor(deps: VolumeBackupDeps) {
    this.deps = deps;
  }

  async reconcile(request: Request, ctx: ReconcileContext<VolumeBackup>): Promise<Result | undefined> {
    const backup = ctx.object;
    await this.releaseClaimsOfGoneBackup(request, backup, ctx);
    if (!backup || isBeingDeleted(backup)) return undefined;
    const recorded = await this.recordFinishedCopies(
      backup,
      this.deps.jobs.byOwner(backup.metadata.uid ?? '').filter((job) => isControlledBy(job, backup)),
      ctx,
    );
    const { jobs } = recorded;
    // A finished backup may still have a pod whose end is on its way: look again for it.
    const afterRecording =
      recorded.retryInMs === undefined ? undefined : { requeueAfterMs: recorded.retryInMs };
    if (backup.status?.phase === 'Completed') {
      await this.keepBackupClaims(backup, ctx);
      return afterRecording;
    }
    const skipped = this.machineSkipsBackup(backup);
    if (backup.status?.phase === 'Failed' && !skipped) {
      const stalled = stalledAfterTheFact(
        backup.status,
        backup.metadata.generation,
        this.deps.now?.() ?? new Date(),
      );
      if (stalled) ctx.status.write(backup, stalled);
      return afterRecording;
    }

    const now = this.deps.now?.() ?? new Date();
    const deadline = deadlineAt(backup, this.deps.deadlineMs, now.getTime());
    let deadlineExceeded: string | undefined;
    let step: { progress: VolumeProgress[]; created: number; retryInMs: number | undefined };
    if (skipped) {
      step = { progress: this.progressOf(backup, jobs, now), created: 0, retryInMs: undefined };
    } else if (now.getTime() >= deadline) {
      // A copy that ended in time is judged first: its pod's report may still be on its way (bounded
      // by POD_END_GRACE_MS after its Job ended).
      if (recorded.retryInMs !== undefined) return { requeueAfterMs: recorded.retryInMs };
      // Out of time: start nothing more, and say where each volume stands.
      step = { progress: this.progressOf(backup, jobs, now), created: 0, retryInMs: undefined };
      if (!step.progress.every((p) => p.state === 'copied')) {
        deadlineExceeded = await this.deadlineMessage(jobs, step.progress, ctx);
      }
    } else {
      step = await this.advance(backup, jobs, now, deadline, ctx);
    }
    const { progress, created, retryInMs } = step;

    const before = backup.status?.phase;
    const status = computeStatus(
      backup,
      {
        progress,
        jobCount: jobs.length + created,
        skipped,
        generation: backup.metadata.generation,
        ...(deadlineExceeded !== undefined ? { deadlineExceeded } : {}),
      },
      now,
    );
    ctx.status.write(
      backup,
      status.phase === 'Completed' ? this.withRestorable(backup, status, now) : status,
    );
    this.reportPhaseChange({ ...backup, status }, before, ctx);
    if (isTerminal(status.phase)) return afterRecording;
    // Look again at the deadline at the latest, even if no Job or claim ever changes again.
    const untilDeadline = deadline - now.getTime();
    const soonest = Math.min(retryInMs ?? untilDeadline, recorded.retryInMs ?? untilDeadline, untilDeadline);
    return { requeueAfterMs: Math.max(soonest, 1) };
  }

  /** `status` with the Restorable condition as the cached claims show it. */
  private withRestorable(backup: VolumeBackup, status: VolumeBackupStatus, now: Date): VolumeBackupStatus {
    const ns = backup.metadata.namespace ?? '';
    const restorable = restorableCondition(backup, (name) => this.deps.claims.get(ns, name));
    return { ...status, conditions: setCondition(status.conditions, restorable, now) };
  }

  /**
   * A Completed backup keeps its bytes: each backup claim holds BACKUP_CLAIM_FINALIZER (claims made
   * before it existed get it now), and the Restorable condition says whether a restore can still read
   * them, with a Warning Event when that turns False.
   */
  private async keepBackupClaims(backup: VolumeBackup, ctx: ReconcileContext<VolumeBackup>): Promise<void> {
    const ns = backup.metadata.namespace ?? '';
    for (const volume of backup.spec.volumes) {
      const claim = this.deps.claims.get(ns, backupClaimName(backup, volume.name));
      if (!claim || isBeingDeleted(claim) || !isControlledBy(claim, backup)) continue;
      if (!hasFinalizer(claim, BACKUP_CLAIM_FINALIZER)) {
        await addFinalizer(this.deps.client, CoreTypes.PersistentVolumeClaim, claim, BACKUP_CLAIM_FINALIZER, {
          signal: ctx.signal,
        });
      }
    }
    const status = backup.status ?? {};
    const previous = findCondition(status.conditions, RESTORABLE);
    const next = this.withRestorable(backup, status, this.deps.now?.() ?? new Date());
    const restorable = findCondition(next.conditions, RESTORABLE);
    if (previous?.status === restorable?.status && previous?.reason === restorable?.reason) return;
    ctx.status.write(backup, next);
    if (restorable?.status === 'False') {
      this.deps.events.warning(backup, {
        reason: restorable.reason,
        action: 'Backup',
        note: restorable.message,
      });
    }
  }

  /**
   * Lets go of the backup claims of a VolumeBackup that is gone or being deleted: their finalizer
   * held them while it lived; now they may follow it (the garbage collector deletes them). That
   * includes an earlier VolumeBackup of the name `live` has now (another uid): its claims must go
   * before `live` can make its own.
   */
  private async releaseClaimsOfGoneBackup(
    request: Request,
    live: VolumeBackup | undefined,
    ctx: ReconcileContext<VolumeBackup>,
  ): Promise<void> {
    const claims = this.deps.claims
      .list({ namespace: request.namespace })
      .filter((claim) => controllerRefOf(claim)?.name === request.name);
    for (const claim of claims) {
      if (!mayReleaseClaim(claim, live)) continue;
      try {
        await removeFinalizer(
          this.deps.client,
          CoreTypes.PersistentVolumeClaim,
          claim,
          BACKUP_CLAIM_FINALIZER,
          {
            signal: ctx.signal,
          },
        );
        ctx.log.info('released a backup claim of a deleted VolumeBackup', { claim: claim.metadata?.name });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  /** The DeadlineExceeded message: for each volume not copied, where its latest copy Job stands. */
  private async deadlineMessage(
    jobs: readonly CachedJob[],
    progress: readonly VolumeProgress[],
    ctx: ReconcileContext<VolumeBackup>,
  ): Promise<string> {
    const attempts = attemptsByVolume(jobs);
    const states = new Map<string, string>();
    for (const p of progress) {
      if (p.state === 'copied') continue;
      const last = attempts.get(p.volume)?.at(-1);
      const job = last && jobs.find((j) => j.metadata?.name === last.name);
      if (!job) continue;
      const pods = this.deps.pods.byOwner(job.metadata?.uid ?? '').filter((pod) => !isBeingDeleted(pod));
      const never = neverHadPods(job, pods);
      if (p.state !== 'copying' && !never) continue;
      const failedCreate = never ? await this.failedCreate(job, ctx) : undefined;
      states.set(p.volume, describeJob(job, pods, failedCreate));
    }
    return deadlineMessage(this.deps.deadlineMs, progress, (volume) => states.get(volume));
  }

  /** The note of the latest FailedCreate Event the Job controller recorded for `job`, if any. */
  private async failedCreate(
    job: CachedJob,
    ctx: ReconcileContext<VolumeBackup>,
  ): Promise<string | undefined> {
    try {
      const list = await this.deps.client.list<FailedCreateEvent>(CoreTypes.Event, {
        namespace: job.metadata?.namespace,
        fieldSelector: `regarding.name=${job.metadata?.name},reason=FailedCreate`,
        signal: ctx.signal,
      });
      const latest = list.items
        .filter((e) => e.regarding?.uid === undefined || e.regarding.uid === job.metadata?.uid)
        .sort((a, b) => eventTime(a) - eventTime(b))
        .at(-1);
      return latest?.note;
    } catch (err) {
      // Only a better message is lost; the backup still fails with the Job's state.
      ctx.log.debug('could not read the Job events', { job: job.metadata?.name, error: String(err) });
      return undefined;
    }
  }

  private progressOf(backup: VolumeBackup, jobs: readonly CachedJob[], now: Date): VolumeProgress[] {
    const attempts = attemptsByVolume(jobs);
    return backup.spec.volumes.map((volume) =>
      volumeProgress(volume.name, attempts.get(volume.name) ?? [], this.deps.retry, now.getTime()),
    );
  }

  /**
   * Starts what is due: for each volume whose next attempt may start, its backup claim and copy Job.
   * Returns the progress after that, how many Jobs it created, and when to look again (a retry
   * waiting out its backoff, or a name still held by a namesake).
   */
  private async advance(
    backup: VolumeBackup,
    jobs: readonly CachedJob[],
    now: Date,
    deadline: number,
    ctx: ReconcileContext<VolumeBackup>,
  ): Promise<{ progress: VolumeProgress[]; created: number; retryInMs: number | undefined }> {
    const progress: VolumeProgress[] = [];
    let created = 0;
    let retryInMs: number | undefined;
    const soonest = (ms: number) => {
      retryInMs = retryInMs === undefined ? ms : Math.min(retryInMs, ms);
    };
    const current = this.progressOf(backup, jobs, now);
    for (const [i, volume] of backup.spec.volumes.entries()) {
      let p = current[i]!;
      const foreign = p.state === 'start' ? this.notTheMachinesClaim(backup, volume) : undefined;
      if (foreign) p = { volume: volume.name, state: 'failed', message: foreign };
      if (p.state === 'start') {
        const claim = await this.ensureBackupClaim(backup, volume, ctx);
        if ('failed' in claim) p = { volume: volume.name, state: 'failed', message: claim.failed };
        else if ('retryInMs' in claim) soonest(claim.retryInMs);
        else {
          const seconds = jobDeadlineSeconds(deadline, now.getTime());
          const job = await this.startCopy(backup, volume, p.attempt, p.lastFailure, seconds, ctx);
          if (job === undefined) soonest(NAMESAKE_RETRY_MS);
          else if (typeof job === 'object') p = { volume: volume.name, state: 'failed', message: job.failed };
          else {
            created++;
            p = { volume: volume.name, state: 'copying', attempt: p.attempt, job };
          }
        }
      }
      if (p.state === 'waiting-to-retry') soonest(p.dueInMs);
      progress.push(p);
    }
    return { progress, created, retryInMs };
  }

  /**
   * Records how each finished copy Job ended (the pod's verified report, or why the copy is not
   * proven) on the Job, then deletes its pods. The Job stays as the record of its attempt; the pod
   * must go, since the PVC protection controller counts every scheduled pod that names a claim as a
   * user, finished or not, so these pods would otherwise keep the Machine's claims (and the backup
   * claims) forever. Returns the Jobs as recorded, and when to look again for a pod whose end the
   * cache does not show yet.
   */
  private async recordFinishedCopies(
    backup: VolumeBackup,
    jobs: readonly CachedJob[],
    ctx: ReconcileContext<VolumeBackup>,
  ): Promise<{ jobs: CachedJob[]; retryInMs: number | undefined }> {
    const now = (this.deps.now?.() ?? new Date()).getTime();
    let retryInMs: number | undefined;
    const out: CachedJob[] = [];
    for (const job of jobs) {
      const pods = this.deps.pods.byOwner(job.metadata?.uid ?? '');
      const record = copyRecord(job, pods, now);
      if (record?.kind === 'wait') {
        retryInMs = Math.min(retryInMs ?? record.retryInMs, record.retryInMs);
        out.push(job);
        continue;
      }
      let current = job;
      if (record) {
        const volume = job.metadata?.labels?.[VOLUME_LABEL] ?? '';
        const annotation: Record<string, string> =
          record.kind === 'report'
            ? { [COPY_REPORT_ANNOTATION]: record.value }
            : { [COPY_FAILURE_ANNOTATION]: record.message };
        try {
          await this.deps.client.patch(CoreTypes.Job, {
            namespace: job.metadata?.namespace,
            name: job.metadata?.name ?? '',
            patchType: 'merge',
            body: { metadata: { uid: job.metadata?.uid, annotations: annotation } },
            signal: ctx.signal,
          });
        } catch (err) {
          // The Job went (the backup is being deleted): nothing to record, nothing to copy into.
          if (isNotFound(err)) continue;
          throw err;
        }
        current = {
          ...job,
          metadata: { ...job.metadata, annotations: { ...job.metadata?.annotations, ...annotation } },
        };
        if (record.kind === 'report') {
          this.deps.events.normal(backup, {
            reason: 'CopyVerified',
            action: 'Backup',
            note: `${describeReport(volume, record.report)} (Job ${job.metadata?.name})`,
          });
        } else {
          this.deps.events.warning(backup, {
            reason: 'CopyFailed',
            action: 'Backup',
            note: `volume ${volume}: copy Job ${job.metadata?.name}: ${record.message}`,
          });
        }
      }
      out.push(current);
      if (copyRecorded(current)) await releaseFinishedJobPods(this.deps.client, pods, ctx.signal);
    }
    return { jobs: out, retryInMs };
  }

  /**
   * Why `volume` may not be copied, for a VolumeBackup that names a Machine: such a backup copies only
   * the claim that Machine (this very uid) reports for that volume, so naming a Machine lends no
   * other claim of the namespace the backup's standing. Undefined for a standalone backup.
   */
  private notTheMachinesClaim(backup: VolumeBackup, volume: BackupSourceVolume): string | undefined {
    const { machineName, machineUID } = backup.spec;
    if (machineName === undefined) return undefined;
    const machine = this.deps.machines.get(backup.metadata.namespace, machineName);
    const only = 'a VolumeBackup that names a Machine copies only the claims that Machine reports';
    if (!machine || machine.metadata.uid !== machineUID) {
      return `volume ${volume.name}: Machine ${machineName} (uid ${machineUID}) not found; ${only}`;
    }
    const reported = machine.status?.volumes?.find((v) => v.name === volume.name)?.claimName;
    if (reported === volume.claimName) return undefined;
    return `volume ${volume.name}: claim ${volume.claimName} is not the claim Machine ${machineName} reports for it (${reported ?? 'none'}); ${only}`;
  }

  /** Whether the backed-up Machine is being deleted with the skip-backup annotation set. */
  private machineSkipsBackup(backup: VolumeBackup): boolean {
    if (backup.spec.machineName === undefined) return false;
    const machine = this.deps.machines.get(backup.metadata.namespace, backup.spec.machineName);
    return (
      machine !== undefined &&
      machine.metadata.uid === backup.spec.machineUID &&
      isBeingDeleted(machine) &&
      skipRequested(machine)
    );
  }

  /** Makes sure the volume's backup claim exists (sized after the source claim). */
  private async ensureBackupClaim(
    backup: VolumeBackup,
    volume: BackupSourceVolume,
    ctx: ReconcileContext<VolumeBackup>,
  ): Promise<ClaimCheck> {
    const ns = backup.metadata.namespace ?? '';
    const name = backupClaimName(backup, volume.name);
    const existing = this.deps.claims.get(ns, name);
    if (existing) return this.checkExistingClaim(backup, volume, existing);
    const source = await this.readClaim(ns, volume.claimName, ctx);
    // Gone or going: nothing can copy it (a pod cannot start on a claim being deleted). The usual
    // cause is a foreground cascading deletion, which deletes the Machine's claims before its finalizers.
    if (!source || isBeingDeleted(source)) {
      return {
        ok: false,
        failed: `volume ${volume.name}: source claim ${volume.claimName} ${source ? 'is being deleted' : 'not found'}; ${SOURCE_GONE_HINT}`,
      };
    }
    // On AlreadyExists: ours and not cached yet, or someone else's, read live (the cache holds only
    // claims with our label, so a foreign claim of this name is invisible to it). Never copy into a
    // claim that is not ours.
    const child = await ensureChild(
      this.deps.client,
      CoreTypes.PersistentVolumeClaim,
      desiredBackupClaim(backup, volume.name, source),
      backup,
      ctx.signal,
    );
    switch (child.kind) {
      case 'refused':
        // A storage quota, a webhook, or invalid: a person has to act, so say it now.
        return {
          ok: false,
          failed: `volume ${volume.name}: backup claim ${name} refused: ${errorMessage(child.error)}`,
        };
      case 'created':
        this.deps.events.normal(backup, {
          reason: 'ClaimCreated',
          action: 'Create',
          note: `Created backup claim ${name}`,
        });
        return { ok: true };
      case 'absent':
        return { ok: false, retryInMs: NAMESAKE_RETRY_MS };
      default:
        return this.checkExistingClaim(backup, volume, child.obj);
    }
  }

  /** Whether an existing claim of the backup claim's name may be copied into. */
  private checkExistingClaim(
    backup: VolumeBackup,
    volume: BackupSourceVolume,
    existing: CachedClaim,
  ): ClaimCheck {
    if (isControlledBy(existing, backup)) return { ok: true };
    // Left by an earlier VolumeBackup of the same name: the garbage collector removes it (it may not
    // have marked it for deletion yet), so wait rather than fail.
    if (isBeingDeleted(existing) || this.isNamesake(backup, existing)) {
      return { ok: false, retryInMs: NAMESAKE_RETRY_MS };
    }
    return {
      ok: false,
      failed: `volume ${volume.name}: claim ${existing.metadata?.name} exists and is not owned by this VolumeBackup`,
    };
  }

  /** Whether `obj` is controlled by a VolumeBackup of `backup`'s name (an earlier one, or this one). */
  private isNamesake(backup: VolumeBackup, obj: KubeObject): boolean {
    const owner = controllerRefOf(obj);
    return owner?.kind === VOLUME_BACKUP.kind && owner.name === backup.metadata.name;
  }

  private async readClaim(
    ns: string,
    name: string,
    ctx: ReconcileContext<VolumeBackup>,
  ): Promise<CachedClaim | undefined> {
    // Claims without our label are not cached: a hand-made VolumeBackup may name one.
    return (
      this.deps.claims.get(ns, name) ??
      getOrUndefined(this.deps.client, CoreTypes.PersistentVolumeClaim, ns, name, ctx.signal)
    );
  }

  /**
   * Creates attempt `attempt`'s copy Job; returns its name, undefined when the name is taken, or why
   * the API server refused it.
   */
  private async startCopy(
    backup: VolumeBackup,
    volume: BackupSourceVolume,
    attempt: number,
    lastFailure: string | undefined,
    deadlineSeconds: number,
    ctx: ReconcileContext<VolumeBackup>,
  ): Promise<string | { failed: string } | undefined> {
    const copy = { image: this.deps.backupJobImage, sourceClaim: volume.claimName, attempt };
    // Root preserves owners; where Pod Security refuses a root pod, the copy runs as non-root.
    const rootTemplate = copyJobTemplate(backup, volume.name, { ...copy, privilege: { mode: 'root' } });
    const refusal = await podRefusal(
      this.deps.client,
      copyPodProbe(rootTemplate, backup.metadata.namespace, `${backup.metadata.name}-probe-`.slice(0, 58)),
      ctx.signal,
    );
    const privilege = copyPrivilege(refusal, backup.spec.copyAs);
    if (privilege.mode === 'nonroot') {
      ctx.log.info('the namespace refuses root copies; copying as non-root', {
        level: privilege.level,
        uid: privilege.uid,
        gid: privilege.gid,
        fsGroup: privilege.fsGroup,
      });
    }
    const job = desiredCopyJob(backup, volume.name, { ...copy, privilege }, deadlineSeconds);
    const name = job.metadata?.name ?? '';
    const child = await ensureChild(this.deps.client, CoreTypes.Job, job, backup, ctx.signal);
    if (child.kind === 'refused') {
      return { failed: `volume ${volume.name}: copy Job ${name} refused: ${errorMessage(child.error)}` };
    }
    if (child.kind !== 'created') {
      // Ours and not cached yet, gone, or a namesake of an earlier VolumeBackup still being
      // collected: either way, look again shortly. Someone else's, which the cache cannot show (it
      // holds only Jobs with our label): then the attempt cannot run, and the backup says why.
      if (child.kind !== 'foreign' || isBeingDeleted(child.obj) || this.isNamesake(backup, child.obj)) {
        return undefined;
      }
      return { failed: `volume ${volume.name}: Job ${name} exists and is not owned by this VolumeBackup` };
    }
    if (lastFailure) {
      this.deps.events.warning(backup, {
        reason: 'CopyRetried',
        action: 'Backup',
        note: `${lastFailure}; started attempt ${attempt} of ${this.deps.retry.maxAttempts} (Job ${name})`,
      });
    } else {
      this.deps.events.normal(backup, {
        reason: 'CopyStarted',
        action: 'Backup',
        note: `Copying claim ${volume.claimName} with Job ${name} ${describeCopyPrivilege(privilege)}`,
      });
    }
    return name;
  }

  private reportPhaseChange(
    backup: VolumeBackup,
    before: VolumeBackupPhase | undefined,
    ctx: ReconcileContext<VolumeBackup>,
  ) {
    const after = backup.status?.phase;
    if (after === before || after === undefined) return;
    ctx.log.info('volume backup phase changed', { from: before, to: after });
    const message = findCondition(backup.status?.conditions, READY)?.message ?? after;
    const { events } = this.deps;
    if (after === 'Running')
      events.normal(backup, { reason: 'BackupStarted', action: 'Backup', note: message });
    if (after === 'Completed')
      events.normal(backup, { reason: 'BackupCompleted', action: 'Backup', note: message });
    if (after === 'Failed') {
      const reason = findCondition(backup.status?.conditions, READY)?.reason ?? 'BackupFailed';
      events.warning(backup, { reason, action: 'Backup', note: message });
    }
  }
}
