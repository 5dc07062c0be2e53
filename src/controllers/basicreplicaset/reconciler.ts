import type { V1Pod } from '@kubernetes/client-node';
import { BASIC_REPLICA_SET, type BasicReplicaSet, basicReplicaSetRuleViolations } from '../../apis/index.ts';
import type { Informer } from '../../runtime/cache/informer.ts';
import { isNotFound } from '../../runtime/client/errors.ts';
import type { KubeClient } from '../../runtime/client/kube-client.ts';
import { controllerRefOf, isBeingDeleted } from '../../runtime/client/object.ts';
import { CoreTypes } from '../../runtime/client/resource.ts';
import type { ReconcileContext, Reconciler, Request, Result } from '../../runtime/controller/reconciler.ts';
import type { EventRecorder } from '../../runtime/events/index.ts';
import type { ControllerExpectations } from '../../runtime/expectations.ts';
import { selectorMatches, selectorProblems } from '../../runtime/labels.ts';
import { errorMessage } from '../../runtime/log.ts';
import { adopt, release } from '../../runtime/write/owner-refs.ts';
import { isProgressOnly, type StatusDebouncer } from '../../runtime/write/status-debounce.ts';
import type { BackgroundStatusWriter } from '../../runtime/write/status-writer.ts';
import { podsToDeleteInOrder } from './logic/deletion-order.ts';
import { isPodActive } from './logic/pod-state.ts';
import { nextAvailabilityCheckIn } from './logic/replica-status.ts';
import { planReplicaChange, runSlowStart } from './logic/slow-start.ts';
import { podForReplicaSet } from './pod-template.ts';
import { computeStatus, type ReplicaFailure } from './status.ts';

export interface BasicReplicaSetDeps {
  client: KubeClient;
  sets: Informer<BasicReplicaSet>;
  pods: Informer<V1Pod>;
  expectations: ControllerExpectations;
  events: EventRecorder;
  debouncer: StatusDebouncer;
  statusWriter: BackgroundStatusWriter<BasicReplicaSet>;
}

/** Counts whose rise alone is progress worth reporting at most once a second. */
const PROGRESS_COUNTS = ['replicas', 'activeReplicas', 'readyReplicas', 'availableReplicas'] as const;

const eventOptions = { regardingType: BASIC_REPLICA_SET };

/** A safety net only: the watch events of the pods a reconcile created or deleted come sooner. */
const STATUS_AFTER_CHANGES_MS = 1000;

/** What manageReplicas did: how many creates or deletes succeeded, and what failed. */
interface ManageOutcome {
  issued: number;
  failure?: ReplicaFailure;
}

/**
 * Keeps exactly spec.replicas active pods for a BasicReplicaSet, as the ReplicaSet controller does:
 * claim (adopt/release) pods, create or delete the difference under expectations so a stale cache
 * never over-creates, then report counts and conditions.
 */
export class BasicReplicaSetReconciler implements Reconciler {
  private readonly deps: BasicReplicaSetDeps;

  constructor(deps: BasicReplicaSetDeps) {
    this.deps = deps;
  }

  async reconcile(request: Request, ctx: ReconcileContext): Promise<Result | undefined> {
    const { sets, expectations } = this.deps;
    const key = `${request.namespace}/${request.name}`;
    const rs = sets.get(request.namespace, request.name);
    if (!rs) {
      expectations.deleteExpectations(key);
      this.deps.debouncer.forget(key);
      this.deps.statusWriter.forget(key);
      return undefined;
    }
    const problems = [...selectorProblems(rs.spec.selector), ...basicReplicaSetRuleViolations(rs)];
    if (problems.length > 0) {
      const message = `invalid spec: ${problems.join('; ')}`;
      this.deps.events.event(rs, 'Warning', 'InvalidSpec', 'Validate', message, eventOptions);
      const status = computeStatus(rs, [], { reason: 'FailedCreate', message }, Date.now());
      this.deps.statusWriter.submit(rs, status, 'urgent', ctx.signal);
      return undefined; // nothing to retry until the spec changes
    }

    const pods = await this.claimPods(rs, ctx);
    const active = pods.filter(isPodActive);
    let outcome: ManageOutcome = { issued: 0 };
    if (expectations.satisfied(key) && !isBeingDeleted(rs)) {
      outcome = await this.manageReplicas(rs, key, active, ctx);
    }
    const failure = outcome.failure;
    if (outcome.issued > 0 && !failure) {
      // The cache has not seen the pods just created or deleted, so a status computed now would
      // report the old counts; their watch events reconcile this set again in a moment, and that
      // reconcile writes one status with the new counts instead of two writes.
      return { requeueAfterMs: STATUS_AFTER_CHANGES_MS };
    }
    const now = Date.now();
    const status = computeStatus(rs, pods, failure, now);
    const progressOnly = isProgressOnly(rs.status, status, PROGRESS_COUNTS);
    const hold = progressOnly ? this.deps.debouncer.holdFor(key) : 0;
    if (hold === 0) {
      this.deps.statusWriter.submit(rs, status, progressOnly ? 'progress' : 'urgent', ctx.signal);
      this.deps.debouncer.wrote(key);
    }
    if (failure) throw new Error(failure.message);
    const next = nextAvailabilityCheckIn(pods, rs.spec.minReadySeconds ?? 0, now);
    const wait = Math.min(next ?? Number.POSITIVE_INFINITY, hold || Number.POSITIVE_INFINITY);
    return Number.isFinite(wait) ? { requeueAfterMs: wait } : undefined;
  }

  /** Pods this set controls after adopting matching orphans and releasing pods that stopped matching. */
  private async claimPods(rs: BasicReplicaSet, ctx: ReconcileContext): Promise<V1Pod[]> {
    const { pods, client } = this.deps;
    const uid = rs.metadata.uid;
    const candidates = new Map<string, V1Pod>();
    for (const pod of pods.byOwner(uid ?? '')) candidates.set(pod.metadata?.uid ?? '', pod);
    for (const pod of pods.list({ namespace: rs.metadata.namespace, selector: rs.spec.selector })) {
      candidates.set(pod.metadata?.uid ?? '', pod);
    }
    const claimed: V1Pod[] = [];
    let ownerChecked = false;
    for (const pod of candidates.values()) {
      const ref = controllerRefOf(pod);
      const matches = selectorMatches(rs.spec.selector, pod.metadata?.labels);
      if (ref && ref.uid === uid) {
        if (matches || isBeingDeleted(rs)) {
          claimed.push(pod);
          continue;
        }
        ctx.log.info('releasing pod that no longer matches the selector', { pod: pod.metadata?.name });
        await release(client, CoreTypes.Pod, pod, rs);
        continue;
      }
      if (ref || !matches || isBeingDeleted(rs) || isBeingDeleted(pod)) continue;
      if (!ownerChecked) {
        // canAdopt: a fresh read, so a set that is being deleted (or replaced) never adopts.
        const fresh = await client.get<BasicReplicaSet>(
          BASIC_REPLICA_SET,
          rs.metadata.namespace,
          rs.metadata.name ?? '',
        );
        if (fresh.metadata.uid !== uid || isBeingDeleted(fresh)) return claimed;
        ownerChecked = true;
      }
      try {
        claimed.push(await adopt(client, CoreTypes.Pod, pod, rs, BASIC_REPLICA_SET));
        ctx.log.info('adopted orphan pod', { pod: pod.metadata?.name });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return claimed;
  }

  private async manageReplicas(
    rs: BasicReplicaSet,
    key: string,
    active: V1Pod[],
    ctx: ReconcileContext,
  ): Promise<ManageOutcome> {
    const { client, expectations, events } = this.deps;
    const desired = rs.spec.replicas ?? 1;
    const change = planReplicaChange(active.length, desired);
    if (change.create > 0) {
      expectations.expectCreations(key, change.create);
      ctx.log.debug('creating pods', { count: change.create, active: active.length, desired });
      const result = await runSlowStart(change.create, async () => {
        const pod = await client.create<V1Pod>(CoreTypes.Pod, podForReplicaSet(rs), { signal: ctx.signal });
        events.event(
          rs,
          'Normal',
          'SuccessfulCreate',
          'Create',
          `Created pod: ${pod.metadata?.name}`,
          eventOptions,
        );
      });
      // Creates that failed or never ran will not be observed: stop waiting for them.
      const notCreated = result.failed + result.skipped;
      if (notCreated > 0) expectations.lowerExpectations(key, notCreated);
      const issued = result.succeeded;
      if (result.failed > 0) {
        const message = `creating pods failed: ${errorMessage(result.errors[0])}`;
        events.event(rs, 'Warning', 'FailedCreate', 'Create', message, eventOptions);
        return { issued, failure: { reason: 'FailedCreate', message } };
      }
      return { issued };
    }
    if (change.delete > 0) {
      const victims = podsToDeleteInOrder(active, change.delete, Date.now());
      expectations.expectDeletions(
        key,
        victims.map((p) => p.metadata?.uid ?? ''),
      );
      ctx.log.debug('deleting pods', { count: victims.length, active: active.length, desired });
      const outcomes = await Promise.allSettled(
        victims.map((pod) =>
          client.delete(CoreTypes.Pod, pod.metadata?.namespace, pod.metadata?.name ?? '', {
            preconditions: { uid: pod.metadata?.uid },
            signal: ctx.signal,
          }),
        ),
      );
      let firstError: unknown;
      let issued = 0;
      outcomes.forEach((outcome, i) => {
        const pod = victims[i]!;
        if (outcome.status === 'fulfilled') {
          issued++;
          events.event(
            rs,
            'Normal',
            'SuccessfulDelete',
            'Delete',
            `Deleted pod: ${pod.metadata?.name}`,
            eventOptions,
          );
          return;
        }
        // A delete that did not happen will not be observed.
        expectations.deletionObserved(key, pod.metadata?.uid ?? '');
        if (!isNotFound(outcome.reason)) firstError ??= outcome.reason;
      });
      if (firstError) {
        const message = `deleting pods failed: ${errorMessage(firstError)}`;
        events.event(rs, 'Warning', 'FailedDelete', 'Delete', message, eventOptions);
        return { issued, failure: { reason: 'FailedDelete', message } };
      }
      return { issued };
    }
    return { issued: 0 };
  }
}
