import type { V1Pod } from '@kubernetes/client-node';
import {
  BASIC_REPLICA_SET,
  type BasicReplicaSet,
  type BasicReplicaSetStatus,
  basicReplicaSetRuleViolations,
  REPLICA_SET_POD_LABEL,
} from '../../apis/index.ts';
import type { Informer } from '../../runtime/cache/informer.ts';
import { isNamespaceTerminating, isNotFound } from '../../runtime/client/errors.ts';
import type { KubeClient } from '../../runtime/client/kube-client.ts';
import { isBeingDeleted, type KubeObject } from '../../runtime/client/object.ts';
import { CoreTypes } from '../../runtime/client/resource.ts';
import type { ReconcileContext, Reconciler, Request, Result } from '../../runtime/controller/reconciler.ts';
import type { ObjectEventRecorder } from '../../runtime/events/index.ts';
import type { ControllerExpectations } from '../../runtime/expectations.ts';
import { selectorProblems } from '../../runtime/labels.ts';
import { errorMessage } from '../../runtime/log.ts';
import type { CachedPod } from './cached.ts';
import { countsAs, planClaims } from './logic/claim.ts';
import type { ClaimedArrivals } from './logic/claimed-arrivals.ts';
import { podsToDeleteInOrder } from './logic/deletion-order.ts';
import type { Departures } from './logic/departures.ts';
import { podForReplicaSet } from './logic/pod-template.ts';
import { indirectlyRelatedPods } from './logic/related-pods.ts';
import { nextAvailabilityCheckIn } from './logic/replica-status.ts';
import { planReplicaChange, runSlowStart } from './logic/slow-start.ts';
import { adoptPod, markPod, releasePod } from './pod-claims.ts';
import { computeStatus, type ReplicaFailure } from './status.ts';

export interface BasicReplicaSetDeps {
  client: KubeClient;
  sets: Informer<BasicReplicaSet>;
  /** Pods with our marker label, whole. */
  pods: Informer<CachedPod>;
  /** All other pods, metadata only: adoption candidates. */
  otherPods: Informer<KubeObject>;
  expectations: ControllerExpectations;
  claimedArrivals: ClaimedArrivals;
  departures: Departures;
  events: ObjectEventRecorder<BasicReplicaSet>;
}

/** A safety net only: the watch events of the pods a reconcile created or deleted come sooner. */
const STATUS_AFTER_CHANGES_MS = 1000;

/** The pods a set controls and that match its selector. */
interface ClaimedPods {
  active: CachedPod[];
  terminating: CachedPod[];
}

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
export class BasicReplicaSetReconciler implements Reconciler<BasicReplicaSet> {
  private readonly deps: BasicReplicaSetDeps;

  constructor(deps: BasicReplicaSetDeps) {
    this.deps = deps;
  }

  async reconcile(request: Request, ctx: ReconcileContext<BasicReplicaSet>): Promise<Result | undefined> {
    const { expectations } = this.deps;
    const key = `${request.namespace}/${request.name}`;
    const rs = ctx.object;
    if (!rs) {
      expectations.deleteExpectations(key);
      this.deps.departures.forget(key);
      this.deps.claimedArrivals.forgetSet(key);
      return undefined;
    }
    const problems = [...selectorProblems(rs.spec.selector), ...basicReplicaSetRuleViolations(rs)];
    if (problems.length > 0) {
      const message = `invalid spec: ${problems.join('; ')}`;
      this.deps.events.warning(rs, { reason: 'InvalidSpec', action: 'Validate', note: message });
      ctx.status.write(rs, computeStatus(rs, [], { reason: 'FailedCreate', message }, Date.now()));
      return undefined; // nothing to retry until the spec changes
    }

    const { active, terminating } = await this.claimPods(rs, ctx);
    const pods = [...active, ...terminating];
    let outcome: ManageOutcome = { issued: 0 };
    // A pod of this set that lost our marker label is between the two pod caches: wait for it
    // (its arrival reconciles the set again) rather than act on, or report, one pod too few.
    const departureWait = this.deps.departures.waitFor(key);
    if (departureWait > 0) return { requeueAfterMs: departureWait };
    // Pods it claimed are on their way into the pod cache: act once they are there (their arrival
    // reconciles the set again), as once the pods it created are.
    const arriving = this.deps.claimedArrivals.waitFor(key) > 0;
    if (expectations.satisfied(key) && !arriving && !isBeingDeleted(rs)) {
      outcome = await this.manageReplicas(rs, key, active, ctx);
    }
    const failure = outcome.failure;
    if (outcome.issued > 0 && !failure) {
      // The cache has not seen the pods just created or deleted, so a status computed now would
      // report the old counts; their watch events reconcile this set again in a moment, and that
      // reconcile writes one status with the new counts instead of two writes. Unless pods went
      // that the status still counts (deleted, evicted): then, as kube-controller-manager does, the
      // drop is reported at once, before the replacements show, since a Deployment counts their
      // arrival as progress (a rollout past its deadline is Progressing again).
      const found = computeStatus(rs, pods, undefined, Date.now());
      if (countsDropped(rs.status, found)) {
        ctx.status.write(rs, found);
        void ctx.status.flush(rs);
      }
      return { requeueAfterMs: STATUS_AFTER_CHANGES_MS };
    }
    const now = Date.now();
    // rs carries the status last handed over (ctx.object): the cache lags this controller's writes.
    ctx.status.write(rs, computeStatus(rs, pods, failure, now));
    if (failure) throw new Error(failure.message);
    const next = nextAvailabilityCheckIn(pods, rs.spec.minReadySeconds ?? 0, now);
    return next === undefined ? undefined : { requeueAfterMs: next };
  }

  /**
   * The pods this set controls, after adopting matching orphans and releasing pods that stopped
   * matching (upstream claimPods): its active pods, and its terminating ones for status.
   */
  private async claimPods(rs: BasicReplicaSet, ctx: ReconcileContext<BasicReplicaSet>): Promise<ClaimedPods> {
    const { pods, otherPods, client, claimedArrivals } = this.deps;
    const uid = rs.metadata.uid ?? '';
    const namespace = rs.metadata.namespace ?? '';
    const selector = rs.spec.selector;
    const plan = planClaims(
      { uid, namespace, selector, deleting: isBeingDeleted(rs) },
      [...pods.byOwner(uid), ...pods.list({ namespace, selector })],
      [...otherPods.byOwner(uid), ...otherPods.list({ namespace, selector })],
    );
    for (const pod of plan.release) {
      ctx.log.info('releasing pod that no longer matches the selector', { pod: pod.metadata?.name });
      await releasePod(client, pod, rs, ctx.signal);
    }
    const claimed: ClaimedPods = { active: plan.active, terminating: plan.terminating };
    if (plan.adopt.length > 0) await this.checkCanAdopt(rs, ctx);
    const claims = [
      ...plan.adopt.map((pod) => ({ pod, write: adoptPod, what: 'adopted orphan pod' })),
      ...plan.mark.map((pod) => ({ pod, write: markPod, what: 'marked pod' })),
    ];
    const key = `${namespace}/${rs.metadata.name}`;
    for (const { pod, write, what } of claims) {
      const podUid = pod.metadata?.uid ?? '';
      // A claimed pod without our marker enters the pod cache like a created one: the set waits for
      // it (by uid), so no sync acts on a cache that does not show it yet. A pod that has the marker
      // already (orphaned with it) is in that cache: its claim is no arrival.
      const arrives = pod.metadata?.labels?.[REPLICA_SET_POD_LABEL] === undefined;
      const newlyAwaited = arrives && claimedArrivals.expect(key, podUid);
      const result = await write(client, pod, rs, ctx.signal).catch((err: unknown) => {
        if (newlyAwaited) claimedArrivals.forget(podUid);
        throw err;
      });
      // Not written: not claimed (a fresh copy shows another controller, no match, or the pod is
      // gone), or claimed already by an earlier sync whose arrival is awaited (or came) on its own.
      if (newlyAwaited && !result?.written) claimedArrivals.forget(podUid);
      if (!result) continue;
      if (result.written) ctx.log.info(what, { pod: pod.metadata?.name });
      else ctx.log.debug('pod claimed already', { pod: pod.metadata?.name });
      const counted = countsAs(result.pod);
      if (counted) claimed[counted].push(result.pod);
    }
    return claimed;
  }

  /**
   * Upstream RecheckDeletionTimestamp: before the first adoption, a live read of the set, so a set
   * that is being deleted (or was replaced by a namesake) never adopts on the strength of a stale
   * cache. Throws, so nothing else happens in this sync; the retry sees the fresh state.
   */
  private async checkCanAdopt(rs: BasicReplicaSet, ctx: ReconcileContext<BasicReplicaSet>): Promise<void> {
    const fresh = await this.deps.client.get<BasicReplicaSet>(
      BASIC_REPLICA_SET,
      rs.metadata.namespace,
      rs.metadata.name ?? '',
      ctx.signal,
    );
    if (fresh.metadata.uid !== rs.metadata.uid) {
      throw new Error(
        `original BasicReplicaSet ${rs.metadata.namespace}/${rs.metadata.name} is gone: got uid ${fresh.metadata.uid}, wanted ${rs.metadata.uid}`,
      );
    }
    if (isBeingDeleted(fresh)) {
      throw new Error(
        `BasicReplicaSet ${rs.metadata.namespace}/${rs.metadata.name} has just been deleted at ${String(fresh.metadata.deletionTimestamp)}`,
      );
    }
  }

  private async manageReplicas(
    rs: BasicReplicaSet,
    key: string,
    active: CachedPod[],
    ctx: ReconcileContext<BasicReplicaSet>,
  ): Promise<ManageOutcome> {
    const { client, expectations, events } = this.deps;
    const desired = rs.spec.replicas ?? 1;
    const change = planReplicaChange(active.length, desired);
    if (change.create > 0) {
      expectations.expectCreations(key, change.create);
      ctx.log.debug('creating pods', { count: change.create, active: active.length, desired });
      const result = await runSlowStart(change.create, async () => {
        const pod = await client.create<V1Pod>(CoreTypes.Pod, podForReplicaSet(rs), { signal: ctx.signal });
        events.normal(rs, {
          reason: 'SuccessfulCreate',
          action: 'Create',
          note: `Created pod: ${pod.metadata?.name}`,
        });
      });
      // Creates that failed or never ran will not be observed: stop waiting for them.
      const notCreated = result.failed + result.skipped;
      if (notCreated > 0) expectations.lowerExpectations(key, notCreated);
      const issued = result.succeeded;
      if (result.failed > 0 && result.errors.every(isNamespaceTerminating)) {
        // The namespace is being deleted, and this set with it: nothing to report (as upstream).
        ctx.log.debug('not creating pods: the namespace is terminating');
        return { issued };
      }
      if (result.failed > 0) {
        const message = `creating pods failed: ${errorMessage(result.errors[0])}`;
        events.warning(rs, { reason: 'FailedCreate', action: 'Create', note: message });
        return { issued, failure: { reason: 'FailedCreate', message } };
      }
      return { issued };
    }
    if (change.delete > 0) {
      const related = indirectlyRelatedPods(
        rs,
        this.deps.sets.list({ namespace: rs.metadata.namespace }),
        (selector, namespace) => this.deps.pods.list({ namespace, selector }),
      );
      const victims = podsToDeleteInOrder(active, change.delete, Date.now(), related);
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
          events.normal(rs, {
            reason: 'SuccessfulDelete',
            action: 'Delete',
            note: `Deleted pod: ${pod.metadata?.name}`,
          });
          return;
        }
        // A delete that did not happen will not be observed.
        expectations.deletionObserved(key, pod.metadata?.uid ?? '');
        if (!isNotFound(outcome.reason)) firstError ??= outcome.reason;
      });
      if (firstError) {
        const message = `deleting pods failed: ${errorMessage(firstError)}`;
        events.warning(rs, { reason: 'FailedDelete', action: 'Delete', note: message });
        return { issued, failure: { reason: 'FailedDelete', message } };
      }
      return { issued };
    }
    return { issued: 0 };
  }
}

/** Whether `next` counts fewer pods of some kind than `current` reports. */
function countsDropped(current: BasicReplicaSetStatus | undefined, next: BasicReplicaSetStatus): boolean {
  if (!current) return false;
  return (
    (next.replicas ?? 0) < (current.replicas ?? 0) ||
    (next.readyReplicas ?? 0) < (current.readyReplicas ?? 0) ||
    (next.availableReplicas ?? 0) < (current.availableReplicas ?? 0)
  );
}
