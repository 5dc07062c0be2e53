// Before the StatefulSet exists: no claim of someone else may be in the way (a StatefulSet adopts
// any claim of the right name), and every volume with restoreFrom gets its claim made and filled
// from the VolumeBackup first, so the pod starts on the restored data.
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { StatefulSetMachine, StatefulSetMachineStatus } from './api.ts';
import {
  CoreTypes,
  copyIdentityOf,
  copyPrivilege,
  describeCopyPrivilege,
  describeManifest,
  findCondition,
  isBeingDeleted,
  isControlledBy,
  type MachineVolume,
  podRefusal,
  type Result,
  type VolumeBackup,
} from './basic-operator.ts';
import type { ProviderDeps } from './deps.ts';
import type { Kube } from './kube.ts';
import {
  claimName,
  MACHINE_LABEL,
  manifestValue,
  RESTORED_FROM_ANNOTATION,
  RESTORED_MANIFEST_ANNOTATION,
  ROLE_LABEL,
  restoredFromValue,
  restoreJobName,
  statefulSetName,
} from './names.ts';
import { desiredRestoreJob, isRestored, needsLivePods, restoreProbePod, restoreState } from './restore.ts';
import { desiredRestoreClaim, STATEFUL_SET, volumes } from './statefulset.ts';
import { type Observation, READY, type Verdict } from './status.ts';

/** How soon to look again at a claim an earlier StatefulSet of this machine leaves behind. */
const LEFTOVER_CLAIM_RETRY_MS = 5000;
/** How much of a failed copy's last words a RestoreCopyFailed Event carries (a note holds 1 KB). */
const EVENT_OUTPUT_MAX_CHARS = 800;

type VolumeOutcome =
  | { kind: 'ok' }
  | { kind: 'failed'; failure: Verdict }
  | { kind: 'waiting'; phase: 'Pending' | 'Provisioning'; verdict: Verdict; retryAfterMs?: number };

/** `ok`: create the StatefulSet. Otherwise what to report, and when to look again if no event will say. */
export type Preparation = { kind: 'ok' } | { kind: 'blocked'; observation: Observation; result?: Result };

export class VolumePreparation {
  private readonly deps: ProviderDeps;
  private readonly kube: Kube;

  constructor(deps: ProviderDeps, kube: Kube) {
    this.deps = deps;
    this.kube = kube;
  }

  /** `before`: the status last handed over (the cache may not show it yet), to report a change once. */
  async prepare(
    machine: StatefulSetMachine,
    before: StatefulSetMachineStatus | undefined,
  ): Promise<Preparation> {
    const outcomes: VolumeOutcome[] = [];
    for (const volume of volumes(machine)) {
      outcomes.push(
        volume.restoreFrom
          ? await this.restore(machine, volume, before)
          : await this.nothingInTheWay(machine, volume),
      );
    }
    return combine(outcomes);
  }

  /**
   * A volume without restoreFrom: kube-controller-manager makes its claim, unless one of that name
   * exists. Someone else's would become the machine's disk, so it is a failure; one an earlier
   * StatefulSet of this machine leaves behind is waited for (the garbage collector deletes it).
   */
  private async nothingInTheWay(machine: StatefulSetMachine, volume: MachineVolume): Promise<VolumeOutcome> {
    const name = claimName(machine, volume);
    const claim = await this.kube.get(
      CoreTypes.PersistentVolumeClaim,
      machine.metadata.namespace ?? '',
      name,
    );
    if (!claim || isControlledBy(claim, machine)) return { kind: 'ok' };
    const owner = claim.metadata?.ownerReferences?.find((ref) => ref.controller);
    if (owner?.kind === STATEFUL_SET.kind && owner.name === statefulSetName(machine)) {
      return {
        kind: 'waiting',
        phase: 'Provisioning',
        verdict: {
          reason: 'WaitingForOldClaim',
          message: `claim ${name} belongs to an earlier StatefulSet ${owner.name} (uid ${owner.uid}); waiting for the garbage collector to delete it`,
        },
        retryAfterMs: LEFTOVER_CLAIM_RETRY_MS,
      };
    }
    return { kind: 'failed', failure: claimConflict(name) };
  }

  /**
   * Moves a restore along: claim and Job once the backup is Completed; once the Job succeeded, its
   * copy pod's report checked against the backup's manifest, then the mark on the claim.
   */
  private async restore(
    machine: StatefulSetMachine,
    volume: MachineVolume,
    before: StatefulSetMachineStatus | undefined,
  ): Promise<VolumeOutcome> {
    const source = volume.restoreFrom;
    if (!source) return { kind: 'ok' };
    const ns = machine.metadata.namespace ?? '';
    let claim = this.deps.claims.get(ns, claimName(machine, volume));
    const job = this.deps.jobs.get(ns, restoreJobName(machine, volume));
    if (claim && !isControlledBy(claim, machine)) {
      return { kind: 'failed', failure: claimConflict(claimName(machine, volume)) };
    }
    if (job && !isControlledBy(job, machine)) return { kind: 'failed', failure: jobConflict(job) };
    const backup = this.deps.backups.get(ns, source.volumeBackup);
    let jobPods = job ? this.deps.pods.byOwner(job.metadata?.uid ?? '') : [];
    // The pods' watch may be behind the Job's: how the copy ended is read live before it is judged.
    if (job && needsLivePods(job, jobPods)) jobPods = await this.liveJobPods(machine, job);
    const backupClaim =
      !job && !isRestored(volume, claim)
        ? await this.backupClaim(ns, backup, source.volume)
        : () => undefined;
    const state = restoreState(volume, { claim, backup, job, jobPods, backupClaim });
    switch (state.kind) {
      case 'none':
      case 'restored':
        return { kind: 'ok' };
      case 'failed':
        if (state.copyOutput !== undefined && readyReason(before) !== state.reason) {
          this.deps.events.warning(machine, {
            reason: 'RestoreCopyFailed',
            action: 'Restore',
            note: `Restore Job ${restoreJobName(machine, volume)} of volume ${volume.name} failed; its copy pod said: ${state.copyOutput.slice(-EVENT_OUTPUT_MAX_CHARS)}`,
          });
        }
        return { kind: 'failed', failure: { reason: state.reason, message: state.message } };
      case 'waiting':
        if (state.reason === 'BackupNotFound' && readyReason(before) !== 'BackupNotFound') {
          this.deps.events.warning(machine, { reason: state.reason, action: 'Restore', note: state.message });
        }
        return { kind: 'waiting', phase: 'Pending', verdict: state };
      case 'copying':
        return restoring(state.message);
      case 'verified': {
        if (!claim)
          return restoring(`volume ${volume.name}: waiting for claim ${claimName(machine, volume)}`);
        await this.kube.mergePatch(CoreTypes.PersistentVolumeClaim, claim, {
          metadata: {
            annotations: {
              [RESTORED_FROM_ANNOTATION]: restoredFromValue(source),
              [RESTORED_MANIFEST_ANNOTATION]: manifestValue(state.manifest),
            },
          },
        });
        // The mark is the record now. The Job's finished pod would count as a user of both claims
        // (PVC protection) and keep them from ever being deleted: the Job goes, its pod with it.
        if (job && !isBeingDeleted(job)) await this.kube.delete(CoreTypes.Job, job, 'Background');
        this.deps.events.normal(machine, {
          reason: 'RestoreCompleted',
          action: 'Restore',
          note: state.checked
            ? `Restored volume ${volume.name} from VolumeBackup ${source.volumeBackup} into claim ${claimName(machine, volume)}, verified: ${describeManifest(state.manifest)}, as the backup recorded`
            : `Restored volume ${volume.name} from VolumeBackup ${source.volumeBackup} into claim ${claimName(machine, volume)} (${describeManifest(state.manifest)}), checked against the backup claim by the copy but not against a recorded manifest: the VolumeBackup was made before copies were verified and records none`,
        });
        return { kind: 'ok' };
      }
      case 'start': {
        // The claim may be marked already and its Job gone while the cache shows only the latter
        // (claims and Jobs come through separate watches): look before copying again.
        const live =
          claim && (await this.kube.get(CoreTypes.PersistentVolumeClaim, ns, claimName(machine, volume)));
        if (live && isRestored(volume, live)) return { kind: 'ok' };
        if (!claim) {
          const made = await this.kube.create(
            CoreTypes.PersistentVolumeClaim,
            desiredRestoreClaim(machine, volume),
          );
          claim = 'created' in made ? made.created : made.existing;
          if (!claim) return restoring(`volume ${volume.name}: creating claim ${claimName(machine, volume)}`);
          if (!isControlledBy(claim, machine)) {
            return { kind: 'failed', failure: claimConflict(claimName(machine, volume)) };
          }
        }
        const copy = {
          backupClaimName: state.backupClaimName,
          image: this.deps.restoreJobImage,
          activeDeadlineSeconds: this.deps.restoreDeadlineSeconds,
          ...(state.manifest ? { expect: state.manifest } : {}),
        };
        // Root keeps every owner; where the namespace's Pod Security level refuses a root pod
        // (admission's answer to a dry run), the copy runs as the machine's pod does (its
        // podSecurityContext's user, group and fsGroup), so the files come back the workload's.
        const privilege = copyPrivilege(
          await podRefusal(this.deps.client, restoreProbePod(machine, volume, copy), this.kube.signal),
          copyIdentityOf(machine.spec),
        );
        const made = await this.kube.create(
          CoreTypes.Job,
          desiredRestoreJob(machine, volume, { ...copy, privilege }),
        );
        if ('existing' in made && made.existing && !isControlledBy(made.existing, machine)) {
          return { kind: 'failed', failure: jobConflict(made.existing) };
        }
        if ('created' in made) {
          const as =
            privilege.mode === 'root'
              ? 'as root'
              : `${describeCopyPrivilege(privilege)} (Pod Security "${privilege.level}" refuses a root copy here)`;
          this.deps.events.normal(machine, {
            reason: 'RestoreStarted',
            action: 'Restore',
            note: `Restoring volume ${volume.name} from VolumeBackup ${source.volumeBackup} (backup claim ${state.backupClaimName}${state.manifest ? `, expecting ${describeManifest(state.manifest)}` : ', no recorded manifest'}) with Job ${restoreJobName(machine, volume)} ${as}`,
          });
        }
        return restoring(
          `volume ${volume.name}: copying VolumeBackup ${source.volumeBackup} with Job ${restoreJobName(machine, volume)}`,
        );
      }
    }
  }

  /**
   * The backup claim a Completed backup names for `volume`, read live (backup claims are not the
   * provider's: its cache holds none), for restoreSource's check that it is still there and Bound.
   */
  private async backupClaim(
    namespace: string,
    backup: VolumeBackup | undefined,
    volume: string,
  ): Promise<(name: string) => V1PersistentVolumeClaim | undefined> {
    const name = backup?.status?.volumes?.find((v) => v.name === volume)?.backupClaimName;
    if (backup?.status?.phase !== 'Completed' || !name) return () => undefined;
    const claim = await this.kube.get(CoreTypes.PersistentVolumeClaim, namespace, name);
    return (wanted) => (wanted === name ? claim : undefined);
  }

  /** A restore Job's pods as the API server has them now (they carry the Job's labels). */
  private async liveJobPods(machine: StatefulSetMachine, job: V1Job): Promise<V1Pod[]> {
    const pods = await this.kube.list(
      CoreTypes.Pod,
      machine.metadata.namespace ?? '',
      `${MACHINE_LABEL}=${machine.metadata.name},${ROLE_LABEL}=restore`,
    );
    return pods.filter((pod) =>
      pod.metadata?.ownerReferences?.some((ref) => ref.controller && ref.uid === job.metadata?.uid),
    );
  }
}

const restoring = (message: string): VolumeOutcome => ({
  kind: 'waiting',
  phase: 'Provisioning',
  verdict: { reason: 'Restoring', message },
});

function claimConflict(name: string): Verdict {
  return {
    reason: 'ClaimConflict',
    message: `claim ${name} exists and does not belong to this StatefulSetMachine: the StatefulSet would take it as the machine's volume; delete or rename it`,
  };
}

function jobConflict(job: V1Job): Verdict {
  return {
    reason: 'RestoreFailed',
    message: `Job ${job.metadata?.name} exists and does not belong to this StatefulSetMachine; delete or rename it`,
  };
}

function readyReason(status: StatefulSetMachineStatus | undefined): string | undefined {
  return findCondition(status?.conditions, READY)?.reason;
}

/** The first failure wins, then waiting for a backup (Pending), then the rest (Provisioning). */
function combine(outcomes: readonly VolumeOutcome[]): Preparation {
  const failure = outcomes.find((o) => o.kind === 'failed');
  if (failure) return { kind: 'blocked', observation: { kind: 'failed', failure: failure.failure } };
  const waiting = outcomes.filter((o) => o.kind === 'waiting');
  if (waiting.length === 0) return { kind: 'ok' };
  const pending = waiting.filter((o) => o.phase === 'Pending');
  const shown = pending.length > 0 ? pending : waiting;
  const [first] = shown;
  if (!first) return { kind: 'ok' };
  const retries = waiting.flatMap((o) => (o.retryAfterMs !== undefined ? [o.retryAfterMs] : []));
  return {
    kind: 'blocked',
    observation: {
      kind: 'waiting',
      phase: first.phase,
      verdict: { reason: first.verdict.reason, message: shown.map((o) => o.verdict.message).join('; ') },
    },
    ...(retries.length > 0 ? { result: { requeueAfterMs: Math.min(...retries) } } : {}),
  };
}
