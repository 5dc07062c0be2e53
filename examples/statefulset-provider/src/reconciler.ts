// Realizes a StatefulSetMachine as a StatefulSet of one replica and reports it through the contract.
//   stop requested        -> stop.ts (scale to 0, keep the claims, report stopped from live reads)
//   no StatefulSet yet    -> prepare.ts (nobody's claim in the way, restores), then create it
//   StatefulSet exists    -> report its pod and claims (status.ts)
// Deletion needs nothing from us: the garbage collector takes the StatefulSet (and restore claims
// and Jobs) with the StatefulSetMachine, and the StatefulSet's claims with it (whenDeleted: Delete).
import type { V1StatefulSet } from '@kubernetes/client-node';
import type { StatefulSetMachine, StatefulSetMachineStatus } from './api.ts';
import {
  errorMessage,
  findCondition,
  isAlreadyExists,
  isBeingDeleted,
  isControlledBy,
  isForbidden,
  isInvalid,
  type MachineVolumeStatus,
  podRefusal,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
  stopRequested,
} from './basic-operator.ts';
import type { ProviderDeps } from './deps.ts';
import { Kube } from './kube.ts';
import { claimName, podName, statefulSetName } from './names.ts';
import { VolumePreparation } from './prepare.ts';
import { desiredStatefulSet, STATEFUL_SET, templatePod, volumes } from './statefulset.ts';
import { computeStatus, type Observations, observePod, POD_REFUSED, READY } from './status.ts';
import { Stopper } from './stop.ts';

/** How often a stop that is not done yet is looked at again, besides the pod's and set's events. */
const STOPPING_RETRY_MS = 5000;

export class StatefulSetMachineReconciler implements Reconciler<StatefulSetMachine> {
  private readonly deps: ProviderDeps;

  constructor(deps: ProviderDeps) {
    this.deps = deps;
  }

  async reconcile(request: Request, ctx: ReconcileContext<StatefulSetMachine>): Promise<Result | undefined> {
    const machine = this.deps.machines.get(request.namespace, request.name);
    if (!machine || isBeingDeleted(machine)) return undefined;
    const kube = new Kube(this.deps.client, ctx.signal);

    if (stopRequested(machine)) {
      const observations = await new Stopper(this.deps, kube).stop(machine);
      this.writeStatus(machine, observations, ctx);
      const stopped = observations.observation.kind === 'stopping' && observations.observation.stopped;
      return stopped ? undefined : { requeueAfterMs: STOPPING_RETRY_MS };
    }

    // Live when the cache has none: right after we created it, the cache may not show it yet, and
    // its claims would look like someone else's to prepare.ts.
    let set =
      this.deps.statefulSets.get(machine.metadata.namespace, statefulSetName(machine)) ??
      (await kube.get(STATEFUL_SET, machine.metadata.namespace ?? '', statefulSetName(machine)));
    if (!set) {
      const prepared = await new VolumePreparation(this.deps, kube).prepare(
        machine,
        ctx.status.latest(machine),
      );
      if (prepared.kind === 'blocked') {
        this.writeStatus(machine, { observation: prepared.observation, volumes: this.volumes(machine) }, ctx);
        return prepared.result;
      }
      const created = await this.createStatefulSet(machine, kube);
      if ('refused' in created) {
        this.writeStatus(machine, { observation: created.refused, volumes: this.volumes(machine) }, ctx);
        return created.retry ? { requeue: true } : undefined;
      }
      set = created.set;
    }
    if (!isControlledBy(set, machine)) {
      this.writeStatus(
        machine,
        { observation: statefulSetConflict(set), volumes: this.volumes(machine) },
        ctx,
      );
      return undefined;
    }
    // Someone scaled it: one replica is the machine (a stop is the only way to zero).
    if (set.spec?.replicas !== 1 && !isBeingDeleted(set))
      await kube.mergePatch(STATEFUL_SET, set, { spec: { replicas: 1 } });

    const cachedPod = this.deps.pods.get(machine.metadata.namespace, podName(machine));
    const pod = cachedPod && isControlledBy(cachedPod, set) ? observePod(cachedPod) : undefined;
    const refused = pod ? undefined : await this.podRefusal(machine, set, kube);
    this.writeStatus(
      machine,
      {
        observation: {
          kind: 'running',
          running: {
            statefulSet: statefulSetName(machine),
            podName: podName(machine),
            pod,
            ...(refused !== undefined ? { refused } : {}),
          },
        },
        volumes: this.volumes(machine),
      },
      ctx,
    );
    return undefined;
  }

  /**
   * Why admission refuses the StatefulSet's pod, once kube-controller-manager has synced the set
   * (its status.observedGeneration) and still no pod is there: its refusals reach only Events on the
   * StatefulSet, so the provider asks admission the same question with a dry run of the template's
   * pod. No retry of our own: the pod's creation, or the set's next status, wakes the machine.
   */
  private async podRefusal(
    machine: StatefulSetMachine,
    set: V1StatefulSet,
    kube: Kube,
  ): Promise<string | undefined> {
    const synced = (set.status?.observedGeneration ?? 0) >= (set.metadata?.generation ?? 1);
    if (!synced || isBeingDeleted(set)) return undefined;
    try {
      return await podRefusal(this.deps.client, templatePod(machine, set), kube.signal);
    } catch (err) {
      // The pod exists and the cache has not shown it yet.
      if (isAlreadyExists(err)) return undefined;
      throw err;
    }
  }

  /** Creates the StatefulSet, or says why the API server would not (retried with backoff when it may change). */
  private async createStatefulSet(
    machine: StatefulSetMachine,
    kube: Kube,
  ): Promise<{ set: V1StatefulSet } | { refused: Observations['observation']; retry: boolean }> {
    let made: { created: V1StatefulSet } | { existing: V1StatefulSet | undefined };
    try {
      made = await kube.create(STATEFUL_SET, desiredStatefulSet(machine, 1));
    } catch (err) {
      // A quota or an admission webhook may change its mind; an invalid object will not.
      if (!isForbidden(err) && !isInvalid(err)) throw err;
      const verdict = {
        reason: 'StatefulSetRefused',
        message: `StatefulSet ${statefulSetName(machine)} refused: ${errorMessage(err)}`,
      };
      this.deps.events.warning(machine, { reason: verdict.reason, action: 'Create', note: verdict.message });
      return isInvalid(err)
        ? { refused: { kind: 'failed', failure: verdict }, retry: false }
        : { refused: { kind: 'waiting', phase: 'Provisioning', verdict }, retry: true };
    }
    if ('created' in made) {
      this.deps.events.normal(machine, {
        reason: 'StatefulSetCreated',
        action: 'Create',
        note: `Created StatefulSet ${statefulSetName(machine)}; kube-controller-manager makes its pod and claims`,
      });
      return { set: made.created };
    }
    if (!made.existing) {
      return {
        refused: {
          kind: 'waiting',
          phase: 'Provisioning',
          verdict: {
            reason: 'StatefulSetExists',
            message: `StatefulSet ${statefulSetName(machine)} exists but could not be read`,
          },
        },
        retry: true,
      };
    }
    return { set: made.existing };
  }

  /** Each volume's claim as the cache shows it (claims carry our label). */
  private volumes(machine: StatefulSetMachine): MachineVolumeStatus[] {
    return volumes(machine).map((volume) => {
      const name = claimName(machine, volume);
      const phase = this.deps.claims.get(machine.metadata.namespace, name)?.status?.phase;
      return { name: volume.name, claimName: name, ...(phase ? { phase } : {}) };
    });
  }

  /** Hands the status over; an Event when the phase changes to one a person wants to hear of. */
  private writeStatus(
    machine: StatefulSetMachine,
    observations: Observations,
    ctx: ReconcileContext<StatefulSetMachine>,
  ): void {
    const before = ctx.status.latest(machine);
    const status = computeStatus(machine, before, observations, this.deps.now?.() ?? new Date());
    ctx.status.write(machine, status);
    const ready = findCondition(status.conditions, READY);
    if (ready?.reason === POD_REFUSED && findCondition(before?.conditions, READY)?.reason !== POD_REFUSED) {
      this.deps.events.warning(machine, { reason: POD_REFUSED, action: 'Create', note: ready.message });
    }
    if (before?.phase === status.phase) return;
    ctx.log.info('phase changed', { from: before?.phase, to: status.phase });
    announce(machine, status, this.deps);
  }
}

function announce(machine: StatefulSetMachine, status: StatefulSetMachineStatus, deps: ProviderDeps): void {
  const ready = findCondition(status.conditions, READY);
  const note = ready?.message ?? status.phase ?? '';
  if (status.phase === 'Failed') {
    deps.events.warning(machine, { reason: status.failureReason ?? 'Failed', action: 'Reconcile', note });
  } else if (status.phase === 'Running' || status.phase === 'Stopped') {
    deps.events.normal(machine, { reason: status.phase, action: 'Reconcile', note });
  }
}

function statefulSetConflict(set: V1StatefulSet): Observations['observation'] {
  return {
    kind: 'failed',
    failure: {
      reason: 'StatefulSetConflict',
      message: `StatefulSet ${set.metadata?.name} exists and does not belong to this StatefulSetMachine; delete or rename it`,
    },
  };
}
