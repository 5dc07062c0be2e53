import {
  BASIC_DEPLOYMENT,
  BASIC_REPLICA_SET,
  type BasicDeployment,
  type BasicReplicaSet,
  basicDeploymentRuleViolations,
  REVISION_ANNOTATION,
} from '../../apis/index.ts';
import type { Informer } from '../../runtime/cache/informer.ts';
import { OwnWrites } from '../../runtime/cache/own-writes.ts';
import { isConflict, isNotFound } from '../../runtime/client/errors.ts';
import type { KubeClient } from '../../runtime/client/kube-client.ts';
import { isBeingDeleted } from '../../runtime/client/object.ts';
import type { ReconcileContext, Reconciler, Request, Result } from '../../runtime/controller/reconciler.ts';
import type { ObjectEventRecorder } from '../../runtime/events/index.ts';
import { selectorProblems } from '../../runtime/labels.ts';
import { deleteIfPresent, ensureChild, getOrUndefined } from '../../runtime/write/children.ts';
import { adopt, release } from '../../runtime/write/owner-refs.ts';
import { claimSets, selectsAnything } from './claim.ts';
import { validateRollingUpdate } from './logic/fenceposts.ts';
import { maxRevision, nextRevision, setsToDeleteForHistoryLimit } from './logic/history.ts';
import { progressDeadlineRequeue, requeueFor } from './logic/progress.ts';
import { isScalingEvent, planProportionalScale } from './logic/proportional-scale.ts';
import { planRecreate } from './logic/recreate.ts';
import { recordedReplicaValues } from './logic/replica-counts.ts';
import {
  deploymentView,
  findNewSet,
  MAX_REPLICAS_ANNOTATION,
  newSetFor,
  newSetUpdate,
  revisionOf,
  scaledSet,
  setView,
} from './logic/replica-sets.ts';
import { newReplicaSetReplicas, planRollingUpdate } from './logic/rolling-update.ts';
import { computeTemplateHash } from './logic/template-hash.ts';
import type { ScaleAction } from './logic/types.ts';
import type { RevisionWriter } from './revision-writer.ts';
import { computeStatus, type RolloutFacts } from './status.ts';

export interface BasicDeploymentDeps {
  client: KubeClient;
  deployments: Informer<BasicDeployment>;
  sets: Informer<BasicReplicaSet>;
  events: ObjectEventRecorder<BasicDeployment>;
  /** Records the current set's revision on the deployment, in the background. */
  revisions: RevisionWriter;
}

/**
 * Rolls a BasicDeployment out through BasicReplicaSets (upstream's deployment controller): one set
 * per template, rolling or recreate updates, proportional scaling, history and rollback. It reads
 * only BasicReplicaSets and their status: it has no pod client at all.
 */
export class BasicDeploymentReconciler implements Reconciler<BasicDeployment> {
  private readonly deps: BasicDeploymentDeps;
  /** The set versions our writes replaced: a reconcile must not act on a set the cache shows from before. */
  private readonly ownWrites = new OwnWrites();

  constructor(deps: BasicDeploymentDeps) {
    this.deps = deps;
  }

  async reconcile(request: Request, ctx: ReconcileContext<BasicDeployment>): Promise<Result | undefined> {
    try {
      return await this.sync(request, ctx);
    } catch (err) {
      // A set changed after our cache read (writes to sets carry the resourceVersion read). Its update
      // event is already on its way and enqueues this deployment again, so a conflict is not an error
      // to back off from; the delayed requeue is only a safety net.
      if (!isConflict(err)) throw err;
      ctx.log.debug('a BasicReplicaSet changed under us; waiting for its event', { error: String(err) });
      return { requeueAfterMs: 1000 };
    }
  }

  private async sync(request: Request, ctx: ReconcileContext<BasicDeployment>): Promise<Result | undefined> {
    const d = this.deps.deployments.get(request.namespace, request.name);
    if (!d || isBeingDeleted(d)) {
      return undefined; // the garbage collector removes the sets
    }
    const behind = this.deps.sets.byOwner(d.metadata.uid ?? '').find((s) => this.ownWrites.isBehind(s));
    if (behind) {
      // Woken before the event of our own last write to this set: acting now would write it again from
      // the version before (409). That event is on its way and wakes us; the delay is a safety net.
      ctx.log.debug('the cache does not show our last write to a set yet; waiting for its event', {
        set: behind.metadata.name,
      });
      return { requeueAfterMs: 1000 };
    }
    const claimed = await this.claim(d, ctx);
    if (!claimed) {
      ctx.log.debug('the deployment is gone, replaced or being deleted: nothing to do');
      return undefined;
    }
    // Only the status carries it: after a bump, latest() has it before the cache does.
    const collisionCount = ctx.status.latest(d)?.collisionCount;
    const invalid = this.validate(d);
    if (invalid) {
      this.deps.events.warning(d, { reason: 'InvalidSpec', action: 'Validate', note: invalid });
      this.writeStatus(
        d,
        { newSet: findNewSet(d, claimed), allSets: claimed, createdNewSet: false, invalid, collisionCount },
        ctx,
      );
      return undefined;
    }
    const view = deploymentView(d);
    let sets = claimed;
    let newSet = findNewSet(d, sets);
    if (newSet) {
      // Annotations and revision first, as upstream getAllReplicaSetsAndSyncRevision: a scale below
      // then carries the resourceVersion this write produced (the other way round, this write would
      // carry a stale one and fail with 409 on every rollback).
      const synced = await this.syncNewSet(d, newSet, sets);
      sets = sets.map((s) => (s === newSet ? synced : s));
      newSet = synced;
    }
    let oldSets = sets.filter((s) => s !== newSet);
    let createdNewSet = false;

    if (view.paused || isScalingEvent(view, newSet && setView(newSet), oldSets.map(setView))) {
      await this.apply(
        d,
        sets,
        planProportionalScale(view, newSet && setView(newSet), oldSets.map(setView)),
        ctx,
      );
    } else if (view.strategy.type === 'Recreate') {
      const step = planRecreate(view, newSet && setView(newSet), oldSets.map(setView));
      if (step.step === 'create-new') {
        newSet = await this.createNewSet(d, oldSets, step.replicas, collisionCount, ctx);
        if (!newSet) return this.collided(d, sets, collisionCount, ctx);
        createdNewSet = true;
      } else {
        await this.apply(d, sets, step.actions, ctx);
      }
    } else {
      if (!newSet) {
        const replicas = newReplicaSetReplicas(view, undefined, oldSets.map(setView));
        newSet = await this.createNewSet(d, oldSets, replicas, collisionCount, ctx);
        if (!newSet) return this.collided(d, sets, collisionCount, ctx);
        createdNewSet = true;
      } else {
        const step = planRollingUpdate(view, setView(newSet), oldSets.map(setView));
        await this.apply(d, sets, step.actions, ctx);
      }
    }
    if (newSet) this.syncDeploymentRevision(d, newSet, ctx);
    oldSets = sets.filter((s) => s.metadata.uid !== newSet?.metadata.uid);

    const allSets = newSet ? [newSet, ...oldSets] : oldSets;
    const status = this.writeStatus(d, { newSet, allSets, createdNewSet, collisionCount }, ctx);
    // History is trimmed once a rollout is complete, and while paused (upstream sync()), never mid-rollout.
    if (status.ready || view.paused) await this.cleanupHistory(d, oldSets, ctx);
    const deadline = progressDeadlineRequeue(
      {
        progressDeadlineSeconds: d.spec.progressDeadlineSeconds ?? 600,
        progressingReason: status.conditions?.find((c) => c.type === 'Progressing')?.reason,
        lastProgressTime: status.lastProgressTime,
        paused: view.paused === true,
        complete: status.ready === true,
      },
      Date.now(),
    );
    return requeueFor(deadline);
  }

  private validate(d: BasicDeployment): string | undefined {
    const problems = [...selectorProblems(d.spec.selector), ...basicDeploymentRuleViolations(d)];
    if ((d.spec.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
      problems.push(
        ...validateRollingUpdate(
          d.spec.strategy?.rollingUpdate?.maxSurge,
          d.spec.strategy?.rollingUpdate?.maxUnavailable,
        ),
      );
    }
    return problems.length > 0 ? `invalid spec: ${problems.join('; ')}` : undefined;
  }

  /**
   * Sets this deployment controls, after adopting matching orphans and releasing its sets that
   * stopped matching (see claim.ts); undefined when a fresh read shows the deployment gone, replaced
   * or being deleted.
   */
  private async claim(
    d: BasicDeployment,
    ctx: ReconcileContext<BasicDeployment>,
  ): Promise<BasicReplicaSet[] | undefined> {
    const { client, sets } = this.deps;
    const candidates = new Map<string, BasicReplicaSet>();
    for (const set of sets.byOwner(d.metadata.uid ?? '')) candidates.set(set.metadata.uid ?? '', set);
    // The selector goes to the cache's label index: listing the whole namespace made each reconcile
    // scan every set, quadratic in the number of deployments.
    if (selectsAnything(d.spec.selector)) {
      for (const set of sets.list({ namespace: d.metadata.namespace, selector: d.spec.selector })) {
        candidates.set(set.metadata.uid ?? '', set);
      }
    }
    const claimed = await claimSets(d, [...candidates.values()], {
      ownerStillAdopts: async () => {
        const fresh = await getOrUndefined(
          client,
          BASIC_DEPLOYMENT,
          d.metadata.namespace,
          d.metadata.name ?? '',
          ctx.signal,
        );
        return fresh !== undefined && fresh.metadata.uid === d.metadata.uid && !isBeingDeleted(fresh);
      },
      adopt: async (set) => {
        try {
          const adopted = await adopt(client, BASIC_REPLICA_SET, set, d, BASIC_DEPLOYMENT);
          this.ownWrites.wrote(set, adopted);
          ctx.log.info('adopted orphan BasicReplicaSet', { set: set.metadata.name });
          return adopted;
        } catch (err) {
          if (isNotFound(err)) return undefined;
          throw err;
        }
      },
      release: async (set) => {
        ctx.log.info('releasing BasicReplicaSet that no longer matches the selector', {
          set: set.metadata.name,
        });
        await release(client, BASIC_REPLICA_SET, set, d);
      },
    });
    return claimed?.filter((s) => !isBeingDeleted(s));
  }

  /**
   * Creates the set for the current template; undefined when its name is taken by a set of another
   * template (a hash collision): the collision count is then bumped, so the next attempt hashes to
   * another name (upstream getNewReplicaSet).
   */
  private async createNewSet(
    d: BasicDeployment,
    oldSets: BasicReplicaSet[],
    replicas: number,
    collisionCount: number | undefined,
    ctx: ReconcileContext<BasicDeployment>,
  ): Promise<BasicReplicaSet | undefined> {
    const revision = nextRevision(maxRevision(oldSets.map((s) => ({ revision: revisionOf(s) }))));
    const hash = computeTemplateHash(d.spec.template, collisionCount ?? 0);
    const desired = newSetFor(d, hash, replicas, revision);
    desired.metadata.annotations![MAX_REPLICAS_ANNOTATION] = String(
      recordedReplicaValues(deploymentView(d)).maxReplicas,
    );
    const child = await ensureChild(this.deps.client, BASIC_REPLICA_SET, desired, d, ctx.signal);
    switch (child.kind) {
      case 'created':
        this.deps.events.normal(d, {
          reason: 'ScalingReplicaSet',
          action: 'Create',
          note: `Created BasicReplicaSet ${child.obj.metadata.name} with ${replicas} replicas (revision ${revision})`,
        });
        return child.obj;
      case 'refused':
        throw child.error;
      case 'absent':
        // Deleted right after its create failed with AlreadyExists: retried with backoff.
        throw new Error(`BasicReplicaSet ${desired.metadata.name} was deleted while being created`);
      default:
        // Ours, with this template: the cache had not seen it yet.
        if (child.kind === 'ours' && findNewSet(d, [child.obj])) return child.obj;
        ctx.log.info('BasicReplicaSet name collides with another template; bumping collisionCount', {
          set: desired.metadata.name,
          collisionCount: (collisionCount ?? 0) + 1,
        });
        return undefined;
    }
  }

  /**
   * After a hash collision: reports the bumped collisionCount through the status (its only writer,
   * so no other status write can take it back; the next sync reads it back from ctx.status.latest())
   * and retries with backoff.
   */
  private collided(
    d: BasicDeployment,
    sets: BasicReplicaSet[],
    collisionCount: number | undefined,
    ctx: ReconcileContext<BasicDeployment>,
  ): Result {
    this.writeStatus(
      d,
      { newSet: undefined, allSets: sets, createdNewSet: false, collisionCount: (collisionCount ?? 0) + 1 },
      ctx,
    );
    return { requeue: true };
  }

  /**
   * Brings the existing new set in line with the deployment (upstream getNewReplicaSet): copied
   * annotations, minReadySeconds, and its revision: a set reused by a rollback becomes the newest.
   * The write carries the resourceVersion read.
   */
  private async syncNewSet(d: BasicDeployment, newSet: BasicReplicaSet, oldSets: BasicReplicaSet[]) {
    const others = oldSets.filter((s) => s.metadata.uid !== newSet.metadata.uid);
    const revision = nextRevision(maxRevision(others.map((s) => ({ revision: revisionOf(s) }))));
    const update = newSetUpdate(d, newSet, revision);
    if (!update) return newSet;
    const updated = await this.deps.client.patch<BasicReplicaSet>(BASIC_REPLICA_SET, {
      namespace: newSet.metadata.namespace,
      name: newSet.metadata.name ?? '',
      patchType: 'merge',
      body: {
        metadata: { annotations: update.annotations, resourceVersion: newSet.metadata.resourceVersion },
        ...(update.minReadySeconds === undefined
          ? {}
          : { spec: { minReadySeconds: update.minReadySeconds } }),
      },
    });
    this.ownWrites.wrote(newSet, updated);
    const rolledBack = update.annotations[REVISION_ANNOTATION];
    if (rolledBack !== undefined && revisionOf(newSet) > 0n) {
      this.deps.events.normal(d, {
        reason: 'DeploymentRollback',
        action: 'Rollback',
        note: `Rolled back to BasicReplicaSet ${newSet.metadata.name} (now revision ${rolledBack})`,
      });
    }
    return updated;
  }

  /**
   * Records the new set's revision on the deployment itself (upstream SetDeploymentRevision), in the
   * background behind the creates (see RevisionWriter). Only this one key is written. After int64
   * max, a set created without a revision (see nextRevision) records "0": upstream records the
   * wrapped "-9223372036854775808" at the create, then "" from the set on its next sync.
   */
  private syncDeploymentRevision(
    d: BasicDeployment,
    newSet: BasicReplicaSet,
    ctx: ReconcileContext<BasicDeployment>,
  ) {
    this.deps.revisions.record(d, String(revisionOf(newSet)), ctx.signal);
  }

  /** Applies planned scale actions; each write carries the resourceVersion read, so a stale view fails (409) and retries. */
  private async apply(
    d: BasicDeployment,
    sets: BasicReplicaSet[],
    actions: readonly ScaleAction[],
    ctx: ReconcileContext<BasicDeployment>,
  ) {
    for (const action of actions) {
      const set = sets.find((s) => s.metadata.name === action.name);
      if (!set) continue;
      const scaled = await this.deps.client.update<BasicReplicaSet>(
        BASIC_REPLICA_SET,
        scaledSet(set, action),
        {
          signal: ctx.signal,
        },
      );
      this.ownWrites.wrote(set, scaled);
      if (action.to !== action.from) {
        const verb = action.to > action.from ? 'up' : 'down';
        this.deps.events.normal(d, {
          reason: 'ScalingReplicaSet',
          action: 'Scale',
          note: `Scaled ${verb} BasicReplicaSet ${action.name} from ${action.from} to ${action.to}`,
        });
        ctx.log.debug('scaled set', { set: action.name, from: action.from, to: action.to });
      }
    }
  }

  /** Computes the status from the latest one handed over (not the cached one) and hands it over. */
  private writeStatus(d: BasicDeployment, facts: RolloutFacts, ctx: ReconcileContext<BasicDeployment>) {
    const status = computeStatus({ ...d, status: ctx.status.latest(d) }, facts, Date.now());
    ctx.status.write(d, status);
    return status;
  }

  private async cleanupHistory(
    d: BasicDeployment,
    oldSets: BasicReplicaSet[],
    ctx: ReconcileContext<BasicDeployment>,
  ) {
    const history = oldSets.map((s) => ({
      set: s,
      name: s.metadata.name ?? '',
      revision: revisionOf(s),
      creationTimestamp: s.metadata.creationTimestamp as Date | string | undefined,
      specReplicas: s.spec.replicas ?? 1,
      statusReplicas: s.status?.replicas ?? 0,
      generation: s.metadata.generation,
      observedGeneration: s.status?.observedGeneration,
      deleting: isBeingDeleted(s),
    }));
    for (const old of setsToDeleteForHistoryLimit(history, d.spec.revisionHistoryLimit ?? 10)) {
      if (await deleteIfPresent(this.deps.client, BASIC_REPLICA_SET, old.set, { signal: ctx.signal })) {
        ctx.log.info('deleted old BasicReplicaSet beyond revisionHistoryLimit', {
          set: old.name,
          revision: String(old.revision),
        });
      }
    }
  }
}
