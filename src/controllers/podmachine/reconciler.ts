import type { V1Job, V1Pod } from '@kubernetes/client-node';
import {
  copyIdentityOf,
  copyPrivilege,
  describeCopyPrivilege,
  describeManifest,
  jobOutcome,
  type MachineVolume,
  type PodMachine,
  reportableCopyAs,
  stopRequested,
  type VolumeBackup,
} from '../../apis/index.ts';
import type { Informer } from '../../runtime/cache/informer.ts';
import { isNotFound } from '../../runtime/client/errors.ts';
import type { KubeClient } from '../../runtime/client/kube-client.ts';
import { controllerRefOf, isBeingDeleted, type KubeObject } from '../../runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../../runtime/client/resource.ts';
import type { ReconcileContext, Reconciler, Request, Result } from '../../runtime/controller/reconciler.ts';
import type { ObjectEventRecorder } from '../../runtime/events/index.ts';
import { errorMessage } from '../../runtime/log.ts';
import { podRefusal } from '../../runtime/write/admission.ts';
import {
  type Child,
  deleteIfPresent,
  ensureChild,
  getOrUndefined,
  releaseFinishedJobPods,
} from '../../runtime/write/children.ts';
import { findCondition, READY } from '../../runtime/write/conditions.ts';
import { isControlledBy } from '../../runtime/write/owner-refs.ts';
import type { CachedClaim, CachedJob, CachedPod } from './cached.ts';
import { desiredClaim, desiredPod, desiredRestoreJob, restoreProbePod, volumes } from './logic/children.ts';
import { observePod } from './logic/observe.ts';
import {
  failureRecord,
  isRestored,
  needsLiveRead,
  outcomeRecorded,
  type RestoreObservation,
  type RestoreState,
  restoreState,
} from './logic/restore.ts';
import {
  claimName,
  manifestValue,
  POD_MACHINE_LABEL,
  podMachineLabelValue,
  podName,
  RESTORE_FAILURE_ANNOTATION,
  RESTORED_FROM_ANNOTATION,
  RESTORED_MANIFEST_ANNOTATION,
  ROLE_LABEL,
  restoredFromValue,
  restoreJobName,
} from './names.ts';
import { isInherited, reparent } from './reparent.ts';
import {
  computeStatus,
  type PodMachineObservations,
  type PodObservation,
  refusal,
  VOLUMES_READY,
  type VolumeObservation,
} from './status.ts';

export interface PodMachineDeps {
  client: KubeClient;
  pods: Informer<CachedPod>;
  claims: Informer<CachedClaim>;
  jobs: Informer<CachedJob>;
  backups: Informer<VolumeBackup>;
  events: ObjectEventRecorder<PodMachine>;
  /** Image of the restore Jobs (the manager's --backup-job-image). */
  backupJobImage: string;
  /** activeDeadlineSeconds of restore Jobs (the manager's --volume-copy-deadline). */
  restoreDeadlineSeconds: number;
  now?: () => Date;
}

/**
 * How often a PodMachine blocked by a foreign object of a child's name looks again: nothing else
 * wakes it when a person removes that object (the cache holds only objects with our label).
 */
export const FOREIGN_OBJECT_RECHECK_MS = 60_000;

/** How much of a failed copy's last words a RestoreCopyFailed Event carries (a note holds 1 KB). */
const EVENT_OUTPUT_MAX_CHARS = 800;

/** An object of someone else holds the restore Job's name. */
function foreignJob(jobName: string): RestoreState {
  return {
    kind: 'failed',
    reason: 'RestoreFailed',
    message: `Job ${jobName} exists and is not controlled by this PodMachine; delete or rename it`,
    foreign: true,
  };
}

/** A child of the PodMachine's name, as the reconcile found it. */
type Found<T> = { kind: 'ours'; obj: T } | { kind: 'foreign'; obj: T } | { kind: 'absent' };

/**
 * Realizes a PodMachine as one PersistentVolumeClaim per volume plus one Pod mounting them, all
 * controlled by the PodMachine. Volumes with `restoreFrom` are filled by a restore Job before the pod
 * starts. On a stop request (the contract's deletion handshake) it deletes the pod, keeps the claims,
 * and reports `stopped` once nothing runs. It knows nothing about Machines, backups or finalizers;
 * the one thing it knows of its owner is that children its owner controls under its names are its
 * own, from before PodMachines (reparent.ts).
 */
export class PodMachineReconciler implements Reconciler<PodMachine> {
  private readonly deps: PodMachineDeps;

  constructor(deps: PodMachineDeps) {
    this.deps = deps;
  }

  async reconcile(request: Request, ctx: ReconcileContext<PodMachine>): Promise<Result | undefined> {
    const podMachine = ctx.object;
    if (!podMachine) return undefined;
    await this.releaseFinishedRestorePods(podMachine, stopRequested(podMachine), ctx);
    if (stopRequested(podMachine)) return this.stop(podMachine, ctx);
    // Deleted without a stop request: the garbage collector takes the children; create nothing.
    if (isBeingDeleted(podMachine)) return undefined;

    let requeue = false;
    const volumeObservations: VolumeObservation[] = [];
    for (const volume of volumes(podMachine)) {
      const observation = await this.reconcileVolume(podMachine, volume, ctx);
      if (!observation) requeue = true;
      else volumeObservations.push(observation);
    }
    if (requeue) return { requeue: true };

    const podObservation = await this.reconcilePod(podMachine, volumeObservations, ctx);
    if (!podObservation) return { requeue: true };
    const observations: PodMachineObservations = {
      namespace: request.namespace,
      generation: podMachine.metadata.generation,
      stopRequested: false,
      stopped: false,
      volumes: volumeObservations,
      pod: podObservation,
      copyAs: reportableCopyAs(copyIdentityOf(podMachine.spec)),
    };
    this.writeStatus(podMachine, observations, ctx);
    // A refused claim or pod is tried again with the queue's growing backoff (a quota may free up).
    if (refusal(observations)) return { requeue: true };
    // A foreign object is invisible to the labelled cache, so its removal sends no event: look again.
    const foreign =
      podObservation.conflict !== undefined ||
      volumeObservations.some(
        (v) => v.conflict !== undefined || (v.restore.kind === 'failed' && v.restore.foreign),
      );
    return foreign ? { requeueAfterMs: FOREIGN_OBJECT_RECHECK_MS } : undefined;
  }

  /** Ensures the volume's claim (and its restore); undefined when the cache has to catch up first. */
  private async reconcileVolume(
    podMachine: PodMachine,
    volume: MachineVolume,
    ctx: ReconcileContext<PodMachine>,
  ): Promise<VolumeObservation | undefined> {
    const ns = podMachine.metadata.namespace ?? '';
    const name = claimName(podMachine, volume);
    const conflict: VolumeObservation = {
      name: volume.name,
      claimName: name,
      conflict: `claim ${name} exists and is not controlled by this PodMachine; delete or rename it`,
      restore: { kind: 'none' },
    };
    const found = await this.own<CachedClaim>(
      CoreTypes.PersistentVolumeClaim,
      this.deps.claims.get(ns, name),
      podMachine,
      ctx,
    );
    if (found.kind === 'foreign') return conflict;
    let claim = found.kind === 'ours' ? found.obj : undefined;
    if (!claim) {
      // Ours and not cached yet, or someone else's (the cache holds only objects with our label, so
      // a foreign claim of this name is invisible to it): ensure() reads it live.
      const made = await this.ensure(
        CoreTypes.PersistentVolumeClaim,
        desiredClaim(podMachine, volume),
        podMachine,
        ctx,
      );
      switch (made.kind) {
        case 'refused':
          // A storage quota, a webhook, or invalid: reported, and retried with backoff.
          return {
            name: volume.name,
            claimName: name,
            refused: errorMessage(made.error),
            restore: { kind: 'none' },
          };
        case 'created':
          this.deps.events.normal(podMachine, {
            reason: 'ClaimCreated',
            action: 'Create',
            note: `Created claim ${name}`,
          });
          break;
        case 'foreign':
          return conflict;
        case 'absent':
          return undefined;
      }
      claim = made.obj;
    }
    const restore = await this.reconcileRestore(podMachine, volume, claim, ctx);
    return {
      name: volume.name,
      claimName: name,
      claimPhase: claim.status?.phase ?? 'Pending',
      restore,
    };
  }

  /**
   * Moves a restore along: start the Job, then, once it ended, record on the claim what its copy pod
   * reported (restored and verified, or why not) before the pod goes.
   */
  private async reconcileRestore(
    podMachine: PodMachine,
    volume: MachineVolume,
    claim: CachedClaim,
    ctx: ReconcileContext<PodMachine>,
  ): Promise<RestoreState> {
    const source = volume.restoreFrom;
    if (!source) return { kind: 'none' };
    const ns = podMachine.metadata.namespace ?? '';
    const jobName = restoreJobName(podMachine, volume);
    const found = await this.own<CachedJob>(CoreTypes.Job, this.deps.jobs.get(ns, jobName), podMachine, ctx);
    if (found.kind === 'foreign') return foreignJob(jobName);
    const job = found.kind === 'ours' ? found.obj : undefined;
    const backup = this.deps.backups.get(ns, source.volumeBackup);
    let observed: RestoreObservation = {
      claim,
      backup,
      job,
      jobPods: job ? this.deps.pods.byOwner(job.metadata?.uid ?? '') : [],
      backupClaim: () => undefined,
    };
    if (!job && !isRestored(volume, claim)) {
      observed.backupClaim = await this.backupClaims(podMachine, volume, backup, ctx);
    } else if (needsLiveRead(volume, claim, job, observed.jobPods)) {
      // Judged on live reads: a copy pod's end the pods' watch has not brought yet, or a verdict
      // recorded on the claim by a reconcile whose write the claims' watch has not brought yet.
      observed = {
        ...observed,
        claim:
          (await getOrUndefined(
            this.deps.client,
            CoreTypes.PersistentVolumeClaim,
            ns,
            claim.metadata?.name ?? '',
            ctx.signal,
          )) ?? claim,
        jobPods: await this.liveJobPods(podMachine, job, ctx),
      };
    }
    const state = restoreState(volume, observed);
    switch (state.kind) {
      case 'start-job':
        return this.startRestore(podMachine, volume, state, ctx);
      case 'verified': {
        await this.annotateClaim(
          claim,
          {
            [RESTORED_FROM_ANNOTATION]: restoredFromValue(source),
            [RESTORED_MANIFEST_ANNOTATION]: manifestValue(state.manifest),
            [RESTORE_FAILURE_ANNOTATION]: null,
          },
          ctx,
        );
        await releaseFinishedJobPods(this.deps.client, observed.jobPods, ctx.signal);
        this.deps.events.normal(podMachine, {
          reason: 'RestoreCompleted',
          action: 'Restore',
          note: state.checked
            ? `Restored volume ${volume.name} from VolumeBackup ${source.volumeBackup}, verified: ${describeManifest(state.manifest)}, as the backup recorded`
            : `Restored volume ${volume.name} from VolumeBackup ${source.volumeBackup} (${describeManifest(state.manifest)}), checked against the backup claim by the copy but not against a recorded manifest: the VolumeBackup was made before copies were verified and records none`,
        });
        return { kind: 'restored' };
      }
      case 'failed': {
        const { unrecorded, copyOutput, ...failed } = state;
        if (unrecorded === undefined || !job) return failed;
        // Recorded first: the Job's pods, and with them the copy's report or last words, go next.
        await this.annotateClaim(
          claim,
          { [RESTORE_FAILURE_ANNOTATION]: failureRecord(unrecorded, failed) },
          ctx,
        );
        if (copyOutput !== undefined) {
          this.deps.events.warning(podMachine, {
            reason: 'RestoreCopyFailed',
            action: 'Restore',
            note: `Restore Job ${jobName} of volume ${volume.name} failed; its copy pod said: ${copyOutput.slice(-EVENT_OUTPUT_MAX_CHARS)}`,
          });
        }
        await releaseFinishedJobPods(this.deps.client, observed.jobPods, ctx.signal);
        return failed;
      }
      case 'waiting':
        if (state.reason === 'BackupNotFound' && this.volumesReason(podMachine) !== 'BackupNotFound') {
          this.deps.events.warning(podMachine, {
            reason: 'BackupNotFound',
            action: 'Restore',
            note: state.message,
          });
        }
        return state;
      default:
        return state;
    }
  }

  /**
   * Asks admission (a dry run) whether a root copy pod may run here, then creates the restore Job:
   * root where Pod Security allows it, non-root where the namespace's level refuses root.
   */
  private async startRestore(
    podMachine: PodMachine,
    volume: MachineVolume,
    state: Extract<RestoreState, { kind: 'start-job' }>,
    ctx: ReconcileContext<PodMachine>,
  ): Promise<RestoreState> {
    const jobName = restoreJobName(podMachine, volume);
    const copy = {
      backupClaimName: state.backupClaimName,
      image: this.deps.backupJobImage,
      activeDeadlineSeconds: this.deps.restoreDeadlineSeconds,
      ...(state.manifest ? { expect: state.manifest } : {}),
    };
    // Where root is refused, the copy runs as the PodMachine's own pod does, so its files come back theirs.
    const privilege = copyPrivilege(
      await podRefusal(this.deps.client, restoreProbePod(podMachine, volume, copy), ctx.signal),
      copyIdentityOf(podMachine.spec),
    );
    // On AlreadyExists, the Job there is read live: the cache holds only Jobs with our label.
    const made = await this.ensure(
      CoreTypes.Job,
      desiredRestoreJob(podMachine, volume, { ...copy, privilege }),
      podMachine,
      ctx,
    );
    if (made.kind === 'refused') throw made.error;
    if (made.kind === 'foreign') return foreignJob(jobName);
    if (made.kind === 'created') {
      const as =
        privilege.mode === 'root'
          ? 'as root'
          : `${describeCopyPrivilege(privilege)} (Pod Security "${privilege.level}" refuses a root copy here: only files of that user and its groups can be restored)`;
      const against = state.manifest
        ? `, to be checked against its manifest (${describeManifest(state.manifest)})`
        : ', which records no manifest to check against';
      this.deps.events.normal(podMachine, {
        reason: 'RestoreStarted',
        action: 'Restore',
        note: `Restoring volume ${volume.name} from VolumeBackup ${volume.restoreFrom?.volumeBackup}${against}, with Job ${jobName} ${as}`,
      });
    }
    return { kind: 'restoring', message: `volume ${volume.name}: copying data (Job ${jobName})` };
  }

  /**
   * The backup claim of `volume`'s source, for restoreSource. Backup claims carry our label, so the
   * cache has them; one it shows missing, being deleted or not Bound is read live before the restore
   * fails on it (BackupClaimLost is terminal: not on a cache that is behind).
   */
  private async backupClaims(
    podMachine: PodMachine,
    volume: MachineVolume,
    backup: VolumeBackup | undefined,
    ctx: ReconcileContext<PodMachine>,
  ): Promise<(name: string) => CachedClaim | undefined> {
    const name = backup?.status?.volumes?.find((v) => v.name === volume.restoreFrom?.volume)?.backupClaimName;
    if (!name) return () => undefined;
    const ns = podMachine.metadata.namespace ?? '';
    const cached = this.deps.claims.get(ns, name);
    const usable = cached && !isBeingDeleted(cached) && cached.status?.phase === 'Bound';
    const claim = usable
      ? cached
      : await getOrUndefined(this.deps.client, CoreTypes.PersistentVolumeClaim, ns, name, ctx.signal);
    return (wanted) => (wanted === name ? claim : undefined);
  }

  /** The pods of a restore Job as the API server has them now (they carry the Job's template labels). */
  private async liveJobPods(
    podMachine: PodMachine,
    job: CachedJob | undefined,
    ctx: ReconcileContext<PodMachine>,
  ): Promise<V1Pod[]> {
    if (!job) return [];
    const list = await this.deps.client.list(CoreTypes.Pod, {
      namespace: podMachine.metadata.namespace ?? '',
      labelSelector: `${ROLE_LABEL}=restore,${POD_MACHINE_LABEL}=${podMachineLabelValue(podMachine)}`,
      signal: ctx.signal,
    });
    return list.items.filter((pod) => controllerRefOf(pod)?.uid === job.metadata?.uid);
  }

  private async annotateClaim(
    claim: CachedClaim,
    annotations: Record<string, string | null>,
    ctx: ReconcileContext<PodMachine>,
  ): Promise<void> {
    await this.deps.client.patch(CoreTypes.PersistentVolumeClaim, {
      namespace: claim.metadata?.namespace ?? '',
      name: claim.metadata?.name ?? '',
      patchType: 'merge',
      body: { metadata: { annotations } },
      signal: ctx.signal,
    });
  }

  /** Creates the pod once every claim exists and every restore is done; undefined to requeue. */
  private async reconcilePod(
    podMachine: PodMachine,
    volumeObservations: readonly VolumeObservation[],
    ctx: ReconcileContext<PodMachine>,
  ): Promise<PodObservation | undefined> {
    const ns = podMachine.metadata.namespace ?? '';
    const name = podName(podMachine);
    const cached = this.deps.pods.get(ns, name);
    const found = await this.own<CachedPod>(CoreTypes.Pod, cached, podMachine, ctx);
    if (found.kind !== 'absent') return observePod(podMachine, found.obj);
    const observation = observePod(podMachine, undefined);
    const volumesAllow = volumeObservations.every(
      (v) =>
        v.conflict === undefined &&
        v.refused === undefined &&
        (v.restore.kind === 'none' || v.restore.kind === 'restored'),
    );
    if (!volumesAllow) return observation;
    // On AlreadyExists: ours and not cached yet, or someone else's (invisible to the labelled cache).
    const made = await this.ensure(CoreTypes.Pod, desiredPod(podMachine), podMachine, ctx);
    switch (made.kind) {
      case 'refused':
        // Pod Security, a quota, a webhook, or invalid: said on the PodMachine rather than only
        // failing the reconcile; the caller retries with the queue's backoff.
        return { ...observation, refused: errorMessage(made.error) };
      case 'absent':
        return undefined;
      case 'created':
        this.deps.events.normal(podMachine, {
          reason: 'PodCreated',
          action: 'Create',
          note: `Created pod ${name}`,
        });
        return observePod(podMachine, made.obj);
      default:
        return observePod(podMachine, made.obj);
    }
  }

  /**
   * The stop request: delete the pod (and any restore still copying), keep the claims, and report
   * `stopped` once live reads show them gone. Nothing is created any more.
   */
  private async stop(podMachine: PodMachine, ctx: ReconcileContext<PodMachine>): Promise<Result | undefined> {
    const ns = podMachine.metadata.namespace ?? '';
    const name = podName(podMachine);
    const found = await this.own<CachedPod>(
      CoreTypes.Pod,
      this.deps.pods.get(ns, name) ??
        (await getOrUndefined(this.deps.client, CoreTypes.Pod, ns, name, ctx.signal)),
      podMachine,
      ctx,
    );
    const pod = found.kind === 'ours' ? found.obj : undefined;
    if (pod && !isBeingDeleted(pod)) {
      await deleteIfPresent(this.deps.client, CoreTypes.Pod, pod, {
        propagationPolicy: 'Background',
        signal: ctx.signal,
      });
      this.deps.events.normal(podMachine, {
        reason: 'Stopping',
        action: 'Delete',
        note: `Stop requested: deleting pod ${name}`,
      });
    }
    const copying = (await this.liveRestoreJobs(podMachine, ctx)).filter(
      (job) => jobOutcome(job) === undefined,
    );
    for (const job of copying) {
      // Foreground: the Job stays (and counts as running) until its pods are gone.
      if (!isBeingDeleted(job)) {
        await deleteIfPresent(this.deps.client, CoreTypes.Job, job, {
          propagationPolicy: 'Foreground',
          signal: ctx.signal,
        });
      }
    }
    const volumeObservations: VolumeObservation[] = [];
    for (const volume of volumes(podMachine)) {
      const claimed = claimName(podMachine, volume);
      // Kept, and taken over if still a Machine's from before PodMachines, so they go with this object.
      const claim = await this.own<CachedClaim>(
        CoreTypes.PersistentVolumeClaim,
        this.deps.claims.get(ns, claimed),
        podMachine,
        ctx,
      );
      const phase = claim.kind === 'ours' ? claim.obj.status?.phase : undefined;
      volumeObservations.push({
        name: volume.name,
        claimName: claimed,
        ...(phase !== undefined ? { claimPhase: phase } : {}),
        restore: { kind: 'none' },
      });
    }
    this.writeStatus(
      podMachine,
      {
        namespace: ns,
        generation: podMachine.metadata.generation,
        stopRequested: true,
        stopped: !pod && copying.length === 0,
        volumes: volumeObservations,
        pod: observePod(podMachine, pod),
        copyAs: reportableCopyAs(copyIdentityOf(podMachine.spec)),
      },
      ctx,
    );
    return undefined;
  }

  /**
   * The PodMachine's restore Jobs as the API server has them now. `stopped` is the signal that the
   * claims may be copied, so it must not rest on a cache that may not show a restore Job still
   * writing into them (as the pod, they are read live during a stop).
   */
  private async liveRestoreJobs(podMachine: PodMachine, ctx: ReconcileContext<PodMachine>): Promise<V1Job[]> {
    const ns = podMachine.metadata.namespace ?? '';
    const found: V1Job[] = [];
    for (const volume of volumes(podMachine)) {
      if (!volume.restoreFrom) continue;
      const name = restoreJobName(podMachine, volume);
      const live = await getOrUndefined(this.deps.client, CoreTypes.Job, ns, name, ctx.signal);
      const job = await this.own(CoreTypes.Job, live, podMachine, ctx);
      if (job.kind === 'ours' && job.obj.metadata?.labels?.[ROLE_LABEL] === 'restore') found.push(job.obj);
    }
    return found;
  }

  /**
   * Deletes the pods of finished restore Jobs (the Jobs stay, as the record) once the Job's outcome is
   * recorded on the claim (reconcileRestore records it, then deletes them itself); during a stop,
   * whatever they reported, since nothing will start on it. The PVC protection controller counts
   * every scheduled pod that names a claim as a user, finished or not, so these pods would otherwise
   * keep the backup claim and the PodMachine's claim from ever being deleted.
   */
  private async releaseFinishedRestorePods(
    podMachine: PodMachine,
    stopping: boolean,
    ctx: ReconcileContext<PodMachine>,
  ): Promise<void> {
    const ns = podMachine.metadata.namespace ?? '';
    for (const volume of volumes(podMachine)) {
      if (!volume.restoreFrom) continue;
      const job = this.deps.jobs.get(ns, restoreJobName(podMachine, volume));
      if (!job || !isControlledBy(job, podMachine) || job.metadata?.labels?.[ROLE_LABEL] !== 'restore')
        continue;
      if (jobOutcome(job) === undefined) continue;
      if (!stopping && !outcomeRecorded(volume, this.deps.claims.get(ns, claimName(podMachine, volume)), job))
        continue;
      await releaseFinishedJobPods(
        this.deps.client,
        this.deps.pods.byOwner(job.metadata?.uid ?? ''),
        ctx.signal,
      );
    }
  }

  /**
   * Sorts out the object that holds a child's name: this PodMachine's own; its controller owner's
   * (re-parented first, see reparent.ts); or someone else's. A PodMachine being deleted takes
   * nothing over: the garbage collector is about to delete what it owns.
   */
  private async own<T extends KubeObject>(
    type: ResourceType<T>,
    obj: T | undefined,
    podMachine: PodMachine,
    ctx: ReconcileContext<PodMachine>,
  ): Promise<Found<T>> {
    if (!obj) return { kind: 'absent' };
    if (isControlledBy(obj, podMachine)) return { kind: 'ours', obj };
    if (!isInherited(obj, podMachine) || isBeingDeleted(podMachine)) return { kind: 'foreign', obj };
    const from = controllerRefOf(obj);
    let taken: T;
    try {
      taken = await reparent(this.deps.client, type, obj, podMachine, ctx.signal);
    } catch (err) {
      if (isNotFound(err)) return { kind: 'absent' };
      throw err;
    }
    if (!isControlledBy(taken, podMachine)) return { kind: 'foreign', obj };
    ctx.log.info('took over a child of the controller owner', {
      kind: type.kind,
      child: obj.metadata?.name,
      from: `${from?.kind} ${from?.name}`,
    });
    this.deps.events.normal(podMachine, {
      reason: 'Reparented',
      action: 'Adopt',
      note: `Took over ${type.kind} ${obj.metadata?.name} from ${from?.kind} ${from?.name}, which created it before PodMachines existed`,
    });
    return { kind: 'ours', obj: taken };
  }

  /**
   * Creates a child of the PodMachine (ensureChild); one that holds its name already is read live
   * and sorted out as own() does, an owner's from before PodMachines taken over.
   */
  private async ensure<T extends KubeObject>(
    type: ResourceType<T>,
    desired: T,
    podMachine: PodMachine,
    ctx: ReconcileContext<PodMachine>,
  ): Promise<Found<T> | Extract<Child<T>, { kind: 'created' | 'refused' }>> {
    const child = await ensureChild(this.deps.client, type, desired, podMachine, ctx.signal);
    if (child.kind === 'created' || child.kind === 'refused') return child;
    return this.own(type, child.kind === 'absent' ? undefined : child.obj, podMachine, ctx);
  }

  /** Hands the status over; an Event when readiness changes its reason in a way worth telling. */
  private writeStatus(
    podMachine: PodMachine,
    obs: PodMachineObservations,
    ctx: ReconcileContext<PodMachine>,
  ): void {
    const now = this.deps.now?.() ?? new Date();
    const before = podMachine.status;
    const status = computeStatus(before, obs, now);
    ctx.status.write(podMachine, status);
    if (before?.phase !== status.phase) {
      ctx.log.info('podmachine phase changed', { from: before?.phase, to: status.phase });
    }
    const ready = findCondition(status.conditions, READY);
    if (!ready || findCondition(before?.conditions, READY)?.reason === ready.reason) return;
    if (status.failureReason !== undefined || refusal(obs)) {
      this.deps.events.warning(podMachine, {
        reason: ready.reason,
        action: 'Reconcile',
        note: ready.message,
      });
    } else if (status.phase !== before?.phase && (status.phase === 'Running' || status.phase === 'Stopped')) {
      this.deps.events.normal(podMachine, { reason: status.phase, action: 'Reconcile', note: ready.message });
    }
  }

  /** The VolumesReady reason last handed over (ctx.object's status: the cache lags our own writes). */
  private volumesReason(podMachine: PodMachine): string | undefined {
    return findCondition(podMachine.status?.conditions, VOLUMES_READY)?.reason;
  }
}
