import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { Machine, MachineVolume, VolumeBackup } from '../../apis/index.ts';
import type { Informer } from '../../runtime/cache/informer.ts';
import { isAlreadyExists, isForbidden, isInvalid, isNotFound } from '../../runtime/client/errors.ts';
import type { KubeClient } from '../../runtime/client/kube-client.ts';
import { isBeingDeleted, type KubeObject } from '../../runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../../runtime/client/resource.ts';
import type { ReconcileContext, Reconciler, Request, Result } from '../../runtime/controller/reconciler.ts';
import type { ObjectEventRecorder } from '../../runtime/events/index.ts';
import { errorMessage } from '../../runtime/log.ts';
import { findCondition } from '../../runtime/write/conditions.ts';
import { isControlledBy } from '../../runtime/write/owner-refs.ts';
import { desiredClaim, desiredPod, desiredRestoreJob, volumes } from './children.ts';
import { creationBlocked, WAITING_FOR_BACKUP_FINALIZER } from './gate.ts';
import {
  claimName,
  podName,
  RESTORED_FROM_ANNOTATION,
  ROLE_LABEL,
  restoredFromValue,
  restoreJobName,
} from './names.ts';
import { observePod } from './observe.ts';
import { jobOutcome, type RestoreState, restoreState } from './restore.ts';
import {
  computeMachineStatus,
  type MachineObservations,
  type PodObservation,
  VOLUMES_READY,
  type VolumeObservation,
} from './status.ts';

export interface MachineDeps {
  client: KubeClient;
  machines: Informer<Machine>;
  pods: Informer<V1Pod>;
  claims: Informer<V1PersistentVolumeClaim>;
  jobs: Informer<V1Job>;
  backups: Informer<VolumeBackup>;
  events: ObjectEventRecorder<Machine>;
  /** Image of the restore Jobs (the manager's --backup-job-image). */
  copyImage: string;
  /** activeDeadlineSeconds of restore Jobs (the manager's --volume-copy-deadline). */
  restoreDeadlineSeconds: number;
  now?: () => Date;
}

/** Whether this reconcile may create children, and whether it held back a create it needed. */
interface CreationGate {
  readonly allowed: boolean;
  held: boolean;
}

/**
 * Realizes a Machine as one PersistentVolumeClaim per volume plus one Pod mounting them, all
 * controlled by the Machine. Volumes with `restoreFrom` are filled by a restore Job before the pod
 * starts. On deletion it stops the pod, keeps the claims, and reports Stopping then Stopped; it knows
 * nothing about backups or finalizers, which are the VolumeBackup controller's business.
 */
export class MachineReconciler implements Reconciler<Machine> {
  private readonly deps: MachineDeps;

  constructor(deps: MachineDeps) {
    this.deps = deps;
  }

  async reconcile(request: Request, ctx: ReconcileContext<Machine>): Promise<Result | undefined> {
    const machine = this.deps.machines.get(request.namespace, request.name);
    if (!machine) return undefined;
    await this.releaseFinishedRestorePods(machine, ctx);
    if (isBeingDeleted(machine)) return this.stop(machine, ctx);

    const blocked = creationBlocked(machine);
    const gate: CreationGate = { allowed: blocked === undefined, held: false };
    let requeue = false;
    const volumeObservations: VolumeObservation[] = [];
    for (const volume of volumes(machine)) {
      const observation = await this.reconcileVolume(machine, volume, gate, ctx);
      if (!observation) requeue = true;
      else volumeObservations.push(observation);
    }
    if (requeue) return { requeue: true };

    const podObservation = await this.reconcilePod(machine, volumeObservations, gate, ctx);
    if (!podObservation) return { requeue: true };
    // A refused claim or pod is tried again with the queue's growing backoff (a quota may free up).
    const refused =
      podObservation.refused !== undefined || volumeObservations.some((v) => v.refused !== undefined);
    const retry: Result | undefined = refused ? { requeue: true } : undefined;
    this.writeStatus(
      machine,
      {
        generation: machine.metadata.generation,
        deleting: false,
        stopped: false,
        volumes: volumeObservations,
        pod: podObservation,
        ...(gate.held && blocked !== undefined
          ? { waiting: { reason: WAITING_FOR_BACKUP_FINALIZER, message: blocked } }
          : {}),
      },
      ctx,
    );
    // Waiting for the finalizer needs no requeue: its arrival is a Machine update that wakes us.
    return retry;
  }

  /** Ensures the volume's claim (and its restore); undefined when the cache has to catch up first. */
  private async reconcileVolume(
    machine: Machine,
    volume: MachineVolume,
    gate: CreationGate,
    ctx: ReconcileContext<Machine>,
  ): Promise<VolumeObservation | undefined> {
    const ns = machine.metadata.namespace ?? '';
    const name = claimName(machine, volume);
    let claim = this.deps.claims.get(ns, name);
    if (claim && !isControlledBy(claim, machine)) {
      return {
        name: volume.name,
        claimName: name,
        conflict: `claim ${name} exists and is not controlled by this Machine; delete or rename it`,
        restore: { kind: 'none' },
      };
    }
    if (!claim && !gate.allowed) {
      gate.held = true;
      return { name: volume.name, claimName: name, restore: { kind: 'none' } };
    }
    if (!claim) {
      try {
        claim = await this.create(CoreTypes.PersistentVolumeClaim, desiredClaim(machine, volume), ctx);
      } catch (err) {
        // Refused (a storage quota, a webhook) or invalid: reported, and retried with backoff.
        if (!isForbidden(err) && !isInvalid(err)) throw err;
        return { name: volume.name, claimName: name, refused: errorMessage(err), restore: { kind: 'none' } };
      }
      if (!claim) {
        // AlreadyExists: ours and not cached yet, or someone else's (the cache holds only objects
        // with our label, so a foreign claim of this name is invisible to it): look live.
        const existing = await this.liveGet<V1PersistentVolumeClaim>(
          CoreTypes.PersistentVolumeClaim,
          ns,
          name,
          ctx,
        );
        if (!existing) return undefined;
        if (!isControlledBy(existing, machine)) {
          return {
            name: volume.name,
            claimName: name,
            conflict: `claim ${name} exists and is not controlled by this Machine; delete or rename it`,
            restore: { kind: 'none' },
          };
        }
        claim = existing;
      } else {
        this.deps.events.normal(machine, {
          reason: 'ClaimCreated',
          action: 'Create',
          note: `Created claim ${name}`,
        });
      }
    }
    const restore = await this.reconcileRestore(machine, volume, claim, gate, ctx);
    return {
      name: volume.name,
      claimName: name,
      claimPhase: claim.status?.phase ?? 'Pending',
      restore,
    };
  }

  /** Moves a restore along: start the Job, then mark the claim restored once it succeeded. */
  private async reconcileRestore(
    machine: Machine,
    volume: MachineVolume,
    claim: V1PersistentVolumeClaim,
    gate: CreationGate,
    ctx: ReconcileContext<Machine>,
  ): Promise<RestoreState> {
    const source = volume.restoreFrom;
    if (!source) return { kind: 'none' };
    const ns = machine.metadata.namespace ?? '';
    const jobName = restoreJobName(machine, volume);
    const job = this.deps.jobs.get(ns, jobName);
    if (job && !isControlledBy(job, machine)) {
      return {
        kind: 'failed',
        reason: 'RestoreFailed',
        message: `Job ${jobName} exists and is not controlled by this Machine; delete or rename it`,
      };
    }
    const state = restoreState(volume, claim, this.deps.backups.get(ns, source.volumeBackup), job);
    switch (state.kind) {
      case 'start-job': {
        if (!gate.allowed) {
          gate.held = true;
          return state;
        }
        const created = await this.create(
          CoreTypes.Job,
          desiredRestoreJob(
            machine,
            volume,
            state.backupClaimName,
            this.deps.copyImage,
            this.deps.restoreDeadlineSeconds,
          ),
          ctx,
        );
        if (!created) {
          // AlreadyExists, and not in the cache (which holds only Jobs with our label): look live.
          const existing = await this.liveGet<V1Job>(CoreTypes.Job, ns, jobName, ctx);
          if (existing && !isControlledBy(existing, machine)) {
            return {
              kind: 'failed',
              reason: 'RestoreFailed',
              message: `Job ${jobName} exists and is not controlled by this Machine; delete or rename it`,
            };
          }
        } else {
          this.deps.events.normal(machine, {
            reason: 'RestoreStarted',
            action: 'Restore',
            note: `Restoring volume ${volume.name} from VolumeBackup ${source.volumeBackup} with Job ${jobName}`,
          });
        }
        return { kind: 'restoring', message: `volume ${volume.name}: copying data (Job ${jobName})` };
      }
      case 'job-succeeded': {
        await this.deps.client.patch(CoreTypes.PersistentVolumeClaim, {
          namespace: ns,
          name: claim.metadata?.name ?? '',
          patchType: 'merge',
          body: { metadata: { annotations: { [RESTORED_FROM_ANNOTATION]: restoredFromValue(source) } } },
          signal: ctx.signal,
        });
        this.deps.events.normal(machine, {
          reason: 'RestoreCompleted',
          action: 'Restore',
          note: `Restored volume ${volume.name} from VolumeBackup ${source.volumeBackup}`,
        });
        return { kind: 'restored' };
      }
      case 'waiting':
        if (state.reason === 'BackupNotFound' && this.conditionReason(machine) !== 'BackupNotFound') {
          this.deps.events.warning(machine, {
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

  /** Creates the pod once every claim exists and every restore is done; undefined to requeue. */
  private async reconcilePod(
    machine: Machine,
    volumeObservations: readonly VolumeObservation[],
    gate: CreationGate,
    ctx: ReconcileContext<Machine>,
  ): Promise<PodObservation | undefined> {
    const ns = machine.metadata.namespace ?? '';
    const cached = this.deps.pods.get(ns, podName(machine));
    const observation = observePod(machine, cached);
    const volumesAllow = volumeObservations.every(
      (v) =>
        !v.conflict &&
        v.refused === undefined &&
        (v.restore.kind === 'none' || v.restore.kind === 'restored'),
    );
    if (cached || !volumesAllow) return observation;
    if (!gate.allowed) {
      gate.held = true;
      return observation;
    }
    let pod: V1Pod | undefined;
    try {
      pod = await this.create(CoreTypes.Pod, desiredPod(machine), ctx);
    } catch (err) {
      // Refused by admission (Pod Security, quota, a webhook) or invalid: say so on the Machine
      // rather than only failing the reconcile; the caller retries with the queue's backoff.
      if (!isForbidden(err) && !isInvalid(err)) throw err;
      return { ...observation, refused: errorMessage(err) };
    }
    if (!pod) {
      // AlreadyExists: ours and not cached yet, or someone else's (invisible to the labelled cache).
      const existing = await this.liveGet<V1Pod>(CoreTypes.Pod, ns, podName(machine), ctx);
      return existing ? observePod(machine, existing) : undefined;
    }
    this.deps.events.normal(machine, {
      reason: 'PodCreated',
      action: 'Create',
      note: `Created pod ${podName(machine)}`,
    });
    return observePod(machine, pod);
  }

  /** Deletion: stop the pod (and any restore still copying), keep the claims, report Stopped. */
  private async stop(machine: Machine, ctx: ReconcileContext<Machine>): Promise<Result | undefined> {
    const ns = machine.metadata.namespace ?? '';
    const name = podName(machine);
    let pod = this.deps.pods.get(ns, name);
    if (!pod) pod = await this.liveGet<V1Pod>(CoreTypes.Pod, ns, name, ctx);
    const ours = pod && isControlledBy(pod, machine) ? pod : undefined;
    if (ours && !isBeingDeleted(ours)) {
      await this.deleteQuietly(CoreTypes.Pod, ours, 'Background', ctx);
      this.deps.events.normal(machine, {
        reason: 'Stopping',
        action: 'Delete',
        note: `Deleting pod ${name}`,
      });
    }
    const copying = (await this.liveRestoreJobs(machine, ctx)).filter((job) => jobOutcome(job) === undefined);
    for (const job of copying) {
      // Foreground: the Job stays (and counts as running) until its pods are gone.
      if (!isBeingDeleted(job)) await this.deleteQuietly(CoreTypes.Job, job, 'Foreground', ctx);
    }
    const stopped = !ours && copying.length === 0;
    const observations: MachineObservations = {
      generation: machine.metadata.generation,
      deleting: true,
      stopped,
      volumes: volumes(machine).map((volume) => {
        const claim = this.deps.claims.get(ns, claimName(machine, volume));
        const phase = claim && isControlledBy(claim, machine) ? claim.status?.phase : undefined;
        return {
          name: volume.name,
          claimName: claimName(machine, volume),
          ...(phase !== undefined ? { claimPhase: phase } : {}),
          restore: { kind: 'none' },
        };
      }),
      pod: observePod(machine, ours),
    };
    this.writeStatus(machine, observations, ctx);
    return undefined;
  }

  /**
   * The Machine's restore Jobs as the API server has them now. `Stopped` is the VolumeBackup
   * controller's signal to copy the claims, so it must not rest on a cache that may not show a
   * restore Job still writing into them (as the pod, it is read live during deletion).
   */
  private async liveRestoreJobs(machine: Machine, ctx: ReconcileContext<Machine>): Promise<V1Job[]> {
    const ns = machine.metadata.namespace ?? '';
    const found: V1Job[] = [];
    for (const volume of volumes(machine)) {
      if (!volume.restoreFrom) continue;
      const job = await this.liveGet<V1Job>(CoreTypes.Job, ns, restoreJobName(machine, volume), ctx);
      if (job && isControlledBy(job, machine) && job.metadata?.labels?.[ROLE_LABEL] === 'restore') {
        found.push(job);
      }
    }
    return found;
  }

  /**
   * Deletes the pods of finished restore Jobs (the Jobs stay, as the record). The PVC protection
   * controller counts every scheduled pod that names a claim as a user, finished or not, so these
   * pods would otherwise keep the backup claim and the Machine's claim from ever being deleted.
   */
  private async releaseFinishedRestorePods(machine: Machine, ctx: ReconcileContext<Machine>): Promise<void> {
    const finished = this.deps.jobs
      .byOwner(machine.metadata.uid ?? '')
      .filter((job) => job.metadata?.labels?.[ROLE_LABEL] === 'restore' && isControlledBy(job, machine))
      .filter((job) => jobOutcome(job) !== undefined);
    for (const job of finished) {
      for (const pod of this.deps.pods.byOwner(job.metadata?.uid ?? '')) {
        if (!isBeingDeleted(pod)) await this.deleteQuietly(CoreTypes.Pod, pod, 'Background', ctx);
      }
    }
  }

  /** Hands the status over; an Event when the phase changes. */
  private writeStatus(machine: Machine, obs: MachineObservations, ctx: ReconcileContext<Machine>): void {
    const now = this.deps.now?.() ?? new Date();
    const before = ctx.status.latest(machine);
    const status = computeMachineStatus(before, obs, now);
    ctx.status.write(machine, status);
    if (before?.phase === status.phase || status.phase === undefined) return;
    ctx.log.info('machine phase changed', { from: before?.phase, to: status.phase });
    const ready = findCondition(status.conditions, 'Ready');
    if (status.phase === 'Failed') {
      this.deps.events.warning(machine, {
        reason: ready?.reason ?? 'Failed',
        action: 'Reconcile',
        note: ready?.message ?? 'failed',
      });
    } else if (status.phase === 'Running' || status.phase === 'Stopped') {
      this.deps.events.normal(machine, {
        reason: status.phase,
        action: 'Reconcile',
        note: ready?.message ?? status.phase,
      });
    }
  }

  private conditionReason(machine: Machine): string | undefined {
    return findCondition(machine.status?.conditions, VOLUMES_READY)?.reason;
  }

  /** Creates `obj`; undefined on AlreadyExists (the cache is behind: requeue and look again). */
  private async create<T extends KubeObject>(
    type: ResourceType<T>,
    obj: T,
    ctx: ReconcileContext<Machine>,
  ): Promise<T | undefined> {
    try {
      return await this.deps.client.create<T>(type, obj, { signal: ctx.signal });
    } catch (err) {
      if (isAlreadyExists(err)) return undefined;
      throw err;
    }
  }

  private async liveGet<T extends KubeObject>(
    type: ResourceType<T>,
    ns: string,
    name: string,
    ctx: ReconcileContext<Machine>,
  ): Promise<T | undefined> {
    try {
      return await this.deps.client.get<T>(type, ns, name, ctx.signal);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private async deleteQuietly(
    type: ResourceType,
    obj: KubeObject,
    propagationPolicy: 'Background' | 'Foreground',
    ctx: ReconcileContext<Machine>,
  ): Promise<void> {
    try {
      await this.deps.client.delete(type, obj.metadata?.namespace, obj.metadata?.name ?? '', {
        propagationPolicy,
        preconditions: { uid: obj.metadata?.uid },
        signal: ctx.signal,
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
