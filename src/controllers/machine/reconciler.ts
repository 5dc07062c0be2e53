import { setTimeout as sleepFor } from 'node:timers/promises';
import {
  AGGREGATE_TO_MANAGER_LABEL,
  type InfrastructureReference,
  isViolation,
  MACHINE,
  MACHINE_FINALIZER,
  type Machine,
  POD_MACHINE,
  readInfrastructure,
  STOP_REQUESTED_ANNOTATION,
  stopRequested,
} from '../../apis/index.ts';
import type { Informer } from '../../runtime/cache/informer.ts';
import type { ResourceDiscovery } from '../../runtime/client/discovery.ts';
import { isForbidden } from '../../runtime/client/errors.ts';
import type { KubeClient } from '../../runtime/client/kube-client.ts';
import {
  controllerRefOf,
  isBeingDeleted,
  type KubeObject,
  toUnstructured,
  type Unstructured,
} from '../../runtime/client/object.ts';
import type { ResourceType } from '../../runtime/client/resource.ts';
import { type Cleanup, finalizer } from '../../runtime/controller/finalizer.ts';
import type { KindWatches } from '../../runtime/controller/kind-watches.ts';
import type { ReconcileContext, Reconciler, Request, Result } from '../../runtime/controller/reconciler.ts';
import type { ObjectEventRecorder } from '../../runtime/events/index.ts';
import { errorMessage } from '../../runtime/log.ts';
import { deleteIfPresent, ensureChild, getOrUndefined } from '../../runtime/write/children.ts';
import { findCondition, READY } from '../../runtime/write/conditions.ts';
import { patchWithGuards } from '../../runtime/write/guarded-patch.ts';
import { isControlledBy } from '../../runtime/write/owner-refs.ts';
import { adoptionPatch, adoptionRefusal } from './logic/adoption.ts';
import { creationBlocked } from './logic/gate.ts';
import { desiredPodMachine } from './logic/inline.ts';
import { crossNamespaceProblem, describeRef, infrastructureRefOf, isInline } from './logic/reference.ts';
import { type Resolution, resolveReference } from './resolve.ts';
import {
  computeStatus,
  INFRASTRUCTURE_READY,
  type Infrastructure,
  type MachineObservation,
  type ProblemReason,
  WARNING_REASONS,
} from './status.ts';

export interface MachineDeps {
  client: KubeClient;
  /** CustomResourceDefinitions, metadata only: which kinds declare the contract. */
  crds: Informer<KubeObject>;
  discovery: ResourceDiscovery;
  /** Informers of the provider kinds, made (and watched) when a Machine first references one. */
  providers: Pick<KindWatches<Unstructured>, 'informerFor'>;
  events: ObjectEventRecorder<Machine>;
  now?: () => Date;
  /** How long a reconcile waits for the first list of a provider kind's new informer (default 10 s). */
  firstListTimeoutMs?: number;
}

/** What one pass found out, and when to look again (undefined: when something changes). */
interface Step {
  observation: MachineObservation;
  result?: Result;
}

/** The provider kind's resource type and its cache, or why the reference cannot be followed. */
type LookUp =
  | { ok: true; type: ResourceType<Unstructured>; informer: Informer<Unstructured> }
  | Extract<Resolution, { ok: false }>;

/**
 * Realizes a Machine through the infrastructure contract (docs/contracts.md): it makes a PodMachine
 * for an inline Machine or follows spec.infrastructureRef, owns the provider object, mirrors its
 * readiness and copies its providerID, addresses, volumes and copyAs; on deletion it asks the
 * provider to stop, reports Stopped once it has, and deletes the object only when its own finalizer
 * is the last.
 * Provider objects are read only through the contract: unstructured, by field path.
 */
export class MachineReconciler implements Reconciler<Machine> {
  private readonly deps: MachineDeps;

  constructor(deps: MachineDeps) {
    this.deps = deps;
  }

  async reconcile(_request: Request, ctx: ReconcileContext<Machine>): Promise<Result | undefined> {
    const machine = ctx.object;
    if (!machine) return undefined;
    // The finalizer comes first, so the Machine never goes while a provider object of it exists.
    return finalizer(
      this.deps.client,
      MACHINE,
      machine,
      MACHINE_FINALIZER,
      {
        apply: async (live) => {
          const step = await this.realize(live, ctx);
          this.report(live, step.observation, ctx);
          return step.result;
        },
        cleanup: (deleted) => this.cleanup(deleted, ctx),
        added: () => ctx.log.debug('added the machine finalizer'),
        removed: () => ctx.log.info('removed the machine finalizer: no provider object is left'),
      },
      ctx.signal,
    );
  }

  /** The provider object of a live Machine: made or found, owned, and read. */
  private async realize(machine: Machine, ctx: ReconcileContext<Machine>): Promise<Step> {
    const generation = machine.metadata.generation;
    const observe = (infrastructure: Infrastructure, ref?: InfrastructureReference): MachineObservation => ({
      generation,
      ...(ref ? { ref } : {}),
      infrastructure,
    });
    const cross = crossNamespaceProblem(machine);
    if (cross) return { observation: observe(problem('CrossNamespaceReference', cross)) };
    const blocked = creationBlocked(machine);
    if (blocked) return { observation: observe({ kind: 'blocked', message: blocked }) };

    const ref = infrastructureRefOf(machine);
    const name = describeRef(ref);
    const namespace = machine.metadata.namespace ?? '';
    // A referenced object is the one in use from the start; a PodMachine once it exists.
    const statusRef = isInline(machine) ? undefined : ref;
    try {
      const found = await this.lookUp(ref, ctx);
      if (!found.ok) {
        const result = found.retryAfterMs !== undefined ? { requeueAfterMs: found.retryAfterMs } : undefined;
        return { observation: observe(problem(found.reason, found.message), statusRef), result };
      }
      let obj = found.informer.get(namespace, ref.name);
      if (!obj && !isInline(machine)) {
        return {
          observation: observe(
            problem(
              'InfrastructureNotFound',
              `${name} (${ref.apiVersion}) does not exist in namespace ${namespace}; waiting for it to be created`,
            ),
            statusRef,
          ),
        };
      }
      if (!obj) {
        obj = await this.createPodMachine(machine, ctx);
        // AlreadyExists, then gone at once: look again with backoff.
        if (!obj)
          return {
            observation: observe(
              problem('InfrastructureNotFound', `${name} was deleted while being created`),
            ),
            result: { requeue: true },
          };
      }
      const owner = controllerRefOf(obj);
      if (owner ? owner.uid !== machine.metadata.uid : isInline(machine)) {
        const whose = owner
          ? `is controlled by ${owner.kind} ${owner.name}`
          : 'was not made for this Machine (it has no controller)';
        return {
          observation: observe(
            problem(
              'InfrastructureOwnedByOther',
              `${name} ${whose}; a provider object serves one Machine. Delete or rename it, or reference another object`,
            ),
            statusRef,
          ),
        };
      }
      if (!owner) {
        const refusal = adoptionRefusal(obj, machine);
        if (refusal) {
          return { observation: observe(problem('InfrastructureNotAdoptable', refusal), statusRef) };
        }
        obj = await patchWithGuards(this.deps.client, found.type, obj, (o) => adoptionPatch(o, machine), {
          attempts: 1,
          signal: ctx.signal,
        });
        this.deps.events.normal(machine, {
          reason: 'InfrastructureOwned',
          action: 'Adopt',
          note: `Set this Machine as the controller owner of ${name}`,
        });
      }
      return { observation: observe(this.read(ref, obj), ref) };
    } catch (err) {
      if (!isForbidden(err)) throw err;
      return { observation: observe(forbidden(ref, err), statusRef), result: { requeue: true } };
    }
  }

  /**
   * Deletion: stop the provider, report Stopped once it has, delete it once every other finalizer
   * is gone; done (the Machine is released) once it is gone too.
   */
  private async cleanup(machine: Machine, ctx: ReconcileContext<Machine>): Promise<Cleanup> {
    const others = (machine.metadata.finalizers ?? []).filter((f) => f !== MACHINE_FINALIZER);
    const step = await this.stop(machine, others, ctx);
    if (step.observation.infrastructure.kind === 'absent' && others.length === 0) return { done: true };
    this.report(machine, step.observation, ctx);
    return { done: false, result: step.result };
  }

  private async stop(
    machine: Machine,
    others: readonly string[],
    ctx: ReconcileContext<Machine>,
  ): Promise<Step> {
    const generation = machine.metadata.generation;
    const waitingFor =
      others.length > 0 ? `; waiting for the finalizers ${others.join(', ')} before the Machine goes` : '';
    const absent = (why: string, ref?: InfrastructureReference): Step => ({
      observation: {
        generation,
        ...(ref ? { ref } : {}),
        infrastructure: { kind: 'absent', message: why },
        deleting: { stopped: true, message: `the Machine is being deleted; ${why}${waitingFor}` },
      },
    });
    const cross = crossNamespaceProblem(machine);
    if (cross) return absent('its reference names another namespace, so there is no provider object to stop');
    const ref = infrastructureRefOf(machine);
    const name = describeRef(ref);
    const namespace = machine.metadata.namespace ?? '';
    try {
      const found = await this.lookUp(ref, ctx);
      if (!found.ok && found.retryAfterMs !== undefined) {
        // Discovery was read a moment ago: look again before concluding there is nothing to stop.
        return {
          observation: {
            generation,
            ref,
            infrastructure: problem(found.reason, found.message),
            deleting: { stopped: false, message: `the Machine is being deleted; looking up ${name}` },
          },
          result: { requeueAfterMs: found.retryAfterMs },
        };
      }
      if (!found.ok) return absent(`there is no provider object to stop (${found.message})`);
      const obj =
        found.informer.get(namespace, ref.name) ??
        (await getOrUndefined(this.deps.client, found.type, namespace, ref.name, ctx.signal));
      if (!obj) return absent(`${name} does not exist`, ref);
      if (!isControlledBy(obj, machine))
        return absent(`${name} is not controlled by this Machine; it is left alone`, ref);
      const observe = (infrastructure: Infrastructure, stopped: boolean, message: string): Step => ({
        observation: { generation, ref, infrastructure, deleting: { stopped, message } },
      });

      let current = obj;
      if (!stopRequested(current)) {
        current = await this.deps.client.patch(found.type, {
          namespace,
          name: ref.name,
          patchType: 'merge',
          body: { metadata: { annotations: { [STOP_REQUESTED_ANNOTATION]: 'true' } } },
          signal: ctx.signal,
        });
        this.deps.events.normal(machine, {
          reason: 'StopRequested',
          action: 'Stop',
          note: `Asked ${name} to stop its compute and keep its volumes`,
        });
      }
      const infrastructure = this.read(ref, current);
      if (infrastructure.kind !== 'provider' || !infrastructure.view.stopped) {
        return observe(
          infrastructure,
          false,
          `the Machine is being deleted; waiting for ${name} to stop (status.stopped)`,
        );
      }
      if (others.length > 0) {
        return observe(
          infrastructure,
          true,
          `the Machine is being deleted; ${name} has stopped and keeps its volumes${waitingFor}`,
        );
      }
      if (!isBeingDeleted(current)) {
        // Foreground: the object stays (and keeps the Machine) until its dependents are gone.
        await deleteIfPresent(this.deps.client, found.type, current, {
          propagationPolicy: 'Foreground',
          signal: ctx.signal,
        });
        this.deps.events.normal(machine, {
          reason: 'InfrastructureDeleted',
          action: 'Delete',
          note: `Deleting ${name}; the Machine goes once it is gone`,
        });
      }
      return observe(infrastructure, true, `the Machine is being deleted; waiting for ${name} to be deleted`);
    } catch (err) {
      if (!isForbidden(err)) throw err;
      return {
        observation: {
          generation,
          ref,
          infrastructure: forbidden(ref, err),
          deleting: { stopped: false, message: `the Machine is being deleted; cannot stop ${name}` },
        },
        result: { requeue: true },
      };
    }
  }

  /** The provider object through the contract; a status of the wrong shape is a violation. */
  private read(ref: InfrastructureReference, obj: Unstructured): Infrastructure {
    const name = describeRef(ref);
    const view = readInfrastructure(obj);
    if (isViolation(view)) {
      return problem(
        'ContractViolation',
        `${name} breaks the Machine infrastructure contract: ${view.violation}; waiting for its provider to fix its status`,
      );
    }
    return { kind: 'provider', name, view };
  }

  /**
   * The resource type of the reference's kind and its (synced) cache, or why it cannot be followed.
   * An informer made just now is waited for until its first list answered: a 403 from it is thrown.
   */
  private async lookUp(ref: InfrastructureReference, ctx: ReconcileContext<Machine>): Promise<LookUp> {
    const resolution = await resolveReference(this.deps, ref, ctx.signal);
    if (!resolution.ok) return resolution;
    const informer = this.deps.providers.informerFor(resolution.type);
    if (!informer.hasSynced) {
      await firstList(informer, this.deps.firstListTimeoutMs ?? 10_000, ctx.signal);
      if (!informer.hasSynced) {
        const why = informer.lastError;
        if (why !== undefined) throw why;
        throw new Error(`the cache of ${resolution.type.plural}.${resolution.type.group} has not synced yet`);
      }
    }
    return { ok: true, type: resolution.type, informer };
  }

  /**
   * Creates the PodMachine of an inline Machine; on AlreadyExists the one there is, read live (ours,
   * not cached yet, or someone else's: the caller tells which), or undefined when it is gone already.
   */
  private async createPodMachine(
    machine: Machine,
    ctx: ReconcileContext<Machine>,
  ): Promise<Unstructured | undefined> {
    const desired = desiredPodMachine(machine);
    const child = await ensureChild(this.deps.client, POD_MACHINE, desired, machine, ctx.signal);
    if (child.kind === 'refused') throw child.error;
    if (child.kind === 'absent') return undefined;
    if (child.kind === 'created') {
      this.deps.events.normal(machine, {
        reason: 'InfrastructureCreated',
        action: 'Create',
        note: `Created ${POD_MACHINE.kind} ${desired.metadata.name} from the Machine's image and volumes`,
      });
    }
    return toUnstructured(child.obj);
  }

  /** Hands the status over; a Warning Event when InfrastructureReady turns to a problem, a Normal one on Running and Stopped. */
  private report(machine: Machine, obs: MachineObservation, ctx: ReconcileContext<Machine>): void {
    const before = machine.status;
    const status = computeStatus(before, obs, this.deps.now?.() ?? new Date());
    ctx.status.write(machine, status);
    const previous = findCondition(before?.conditions, INFRASTRUCTURE_READY);
    const infrastructure = findCondition(status.conditions, INFRASTRUCTURE_READY);
    if (infrastructure && infrastructure.reason !== previous?.reason) {
      ctx.log.info('InfrastructureReady changed', {
        reason: infrastructure.reason,
        message: infrastructure.message,
      });
      if (WARNING_REASONS.has(infrastructure.reason)) {
        this.deps.events.warning(machine, {
          reason: infrastructure.reason,
          action: 'Reconcile',
          note: infrastructure.message,
        });
      }
    }
    if (before?.phase === status.phase) return;
    ctx.log.info('machine phase changed', { from: before?.phase, to: status.phase });
    if (status.phase === 'Running' || status.phase === 'Stopped') {
      this.deps.events.normal(machine, {
        reason: status.phase,
        action: 'Reconcile',
        note: findCondition(status.conditions, READY)?.message ?? status.phase,
      });
    }
  }
}

function problem(reason: ProblemReason, message: string): Infrastructure {
  return { kind: 'problem', reason, message };
}

/** A 403 on the provider kind: what was refused, and how to grant it. */
function forbidden(ref: InfrastructureReference, err: unknown): Infrastructure {
  return problem(
    'InfrastructureForbidden',
    `the operator may not read or change ${describeRef(ref)} (${ref.apiVersion}): ${errorMessage(err)}. ` +
      `Grant it get, list, watch, patch and delete on the kind with a ClusterRole labelled ${AGGREGATE_TO_MANAGER_LABEL}: "true"; retrying with backoff`,
  );
}

/** Waits for the informer's first list to answer, at most `timeoutMs`. */
async function firstList(
  informer: Informer<Unstructured>,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<void> {
  const done = new AbortController();
  const deadline = sleepFor(timeoutMs, undefined, { signal: AbortSignal.any([signal, done.signal]) }).catch(
    () => undefined,
  );
  try {
    await Promise.race([informer.listAttempted(), deadline]);
  } finally {
    done.abort();
  }
}
