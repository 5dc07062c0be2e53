// reconcile() of the BasicReplicaSet controller against a fake API server and real informers filled
// from it, as upstream's replica_set_test.go runs syncReplicaSet with FakePodControl: which pods it
// creates, deletes, adopts and releases, what it expects, reports and records.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { BASIC_REPLICA_SET, type BasicReplicaSet, REPLICA_SET_POD_LABEL } from '../../../src/apis/index.ts';
import type { CachedPod } from '../../../src/controllers/basicreplicaset/cached.ts';
import {
  CONTROLLER_NAME,
  MANAGED_PODS_SELECTOR,
  OTHER_PODS_SELECTOR,
} from '../../../src/controllers/basicreplicaset/index.ts';
import { ClaimedArrivals } from '../../../src/controllers/basicreplicaset/logic/claimed-arrivals.ts';
import { Departures } from '../../../src/controllers/basicreplicaset/logic/departures.ts';
import { podObservers } from '../../../src/controllers/basicreplicaset/pod-observers.ts';
import { BasicReplicaSetReconciler } from '../../../src/controllers/basicreplicaset/reconciler.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import { controllerRefOf, type KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { eventsFor } from '../../../src/runtime/events/index.ts';
import { ControllerExpectations } from '../../../src/runtime/expectations.ts';
import { findCondition } from '../../../src/runtime/write/conditions.ts';
import { controllerReference } from '../../../src/runtime/write/owner-refs.ts';
import { FakeCluster } from '../../support/fake/cluster.ts';
import { harness } from '../../support/fake/harness.ts';
import { type PodOptions, pod } from './pods.ts';
import { replicaSet } from './sets.ts';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const HOUR = 3_600_000;
const KEY = 'ns/web';
const MARKER = { [REPLICA_SET_POD_LABEL]: 'true' };

function set(replicas: number, spec: Partial<BasicReplicaSet['spec']> = {}): BasicReplicaSet {
  const rs = replicaSet('web', { app: 'web' });
  return { ...rs, metadata: { ...rs.metadata, generation: 1 }, spec: { ...rs.spec, replicas, ...spec } };
}

/** A pod of the set: its template's labels, our marker, and the set as controller. */
function ownedPod(name: string, options: PodOptions = {}): V1Pod {
  return withMeta(pod(name, options), {
    labels: { app: 'web', ...MARKER },
    ownerReferences: [controllerReference(set(1), BASIC_REPLICA_SET)],
  });
}

/** A pod nobody controls, with these labels. */
function orphan(name: string, labels: Record<string, string>, options: PodOptions = {}): V1Pod {
  return withMeta(pod(name, options), { labels });
}

function withMeta(p: V1Pod, metadata: V1Pod['metadata']): V1Pod {
  return { ...p, metadata: { ...p.metadata, namespace: 'ns', ...metadata } };
}

/** Whether a JSON Patch tests the object's resourceVersion. */
const testsResourceVersion = (patch: unknown): boolean =>
  (patch as { op: string; path: string; value?: unknown }[]).some(
    (o) => o.op === 'test' && o.path === '/metadata/resourceVersion' && typeof o.value === 'string',
  );

const quota = () =>
  new ApiError(
    403,
    'Forbidden',
    'pods "web-" is forbidden: exceeded quota: two-pods, requested: pods=1, used: pods=2, limited: pods=2',
  );

async function setup(rs: BasicReplicaSet, ...pods: V1Pod[]) {
  const cluster = new FakeCluster();
  cluster.seed(BASIC_REPLICA_SET, rs);
  cluster.seed(CoreTypes.Pod, ...pods);
  const expectations = new ControllerExpectations();
  const claimedArrivals = new ClaimedArrivals();
  const departures = new Departures();
  const sets = await cluster.informer(BASIC_REPLICA_SET);
  const managed = await cluster.informer<CachedPod>(CoreTypes.Pod, { labelSelector: MANAGED_PODS_SELECTOR });
  const others = await cluster.informer<KubeObject>(CoreTypes.Pod, {
    labelSelector: OTHER_PODS_SELECTOR,
    metadataOnly: true,
  });
  const h = await harness<BasicReplicaSet>(
    cluster,
    { for: BASIC_REPLICA_SET },
    async (c, events) =>
      new BasicReplicaSetReconciler({
        client: c.kubeClient,
        sets,
        pods: managed,
        otherPods: others,
        expectations,
        claimedArrivals,
        departures,
        events: eventsFor(events, CONTROLLER_NAME, BASIC_REPLICA_SET),
      }),
  );
  /** From now on the caches tell the controller's bookkeeping what they see, as its observe() hooks do. */
  const observeArrivals = () => {
    const observers = podObservers({ sets, otherPods: others, expectations, claimedArrivals, departures });
    managed.addHandler(observers.managed);
    others.addHandler(observers.others);
  };
  return { ...h, expectations, claimedArrivals, observeArrivals };
}

describe('BasicReplicaSetReconciler', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: NOW }));
  afterEach(() => mock.timers.reset());

  describe('creating pods', () => {
    it('creates the missing pods from the template, owned by the set, and waits for their events', async () => {
      const h = await setup(set(3));
      assert.deepEqual(await h.reconcile('web'), { requeueAfterMs: 1000 });
      assert.deepEqual(h.client.writeSummary(), [
        'create Pod web-00001',
        'create Pod web-00002',
        'create Pod web-00003',
      ]);
      for (const { body } of h.client.writes()) {
        const created = body as V1Pod;
        assert.equal(created.metadata?.generateName, 'web-');
        assert.deepEqual(created.metadata?.labels, { app: 'web', ...MARKER });
        assert.deepEqual(created.metadata?.ownerReferences, [controllerReference(set(1), BASIC_REPLICA_SET)]);
        assert.deepEqual(created.spec?.containers, [{ name: 'app', image: 'pause' }]);
      }
      assert.deepEqual(h.eventSummary(), Array(3).fill('Normal SuccessfulCreate'));
      assert.equal(h.expectations.get(KEY)?.adds, 3);
      assert.deepEqual(h.status.written, [], 'the status waits for the pods to reach the cache');
    });

    it('a pod gone: reports the drop at once, then replaces it (a Deployment counts the replacement as progress)', async () => {
      // kube-controller-manager's status comes from the pods it found before it acted, so a set whose
      // pod was deleted reports replicas 0, then 1 once the replacement is seen; syncRolloutStatus
      // counts the rise as progress (a rollout past its deadline is Progressing again).
      const rs = set(2);
      rs.status = {
        replicas: 2,
        readyReplicas: 2,
        availableReplicas: 2,
        observedGeneration: 1,
      };
      const h = await setup(rs, ownedPod('web-a', { node: 'n1', readySince: NOW - 3_600_000 }));
      assert.deepEqual(await h.reconcile('web'), { requeueAfterMs: 1000 });
      assert.deepEqual(h.client.writeSummary(), ['create Pod web-00001']);
      const reported = h.status.last('web');
      assert.equal(reported?.replicas, 1);
      assert.equal(reported?.readyReplicas, 1);
      assert.deepEqual(
        h.status.flushed,
        [{ name: 'web', written: 1 }],
        'sent at once, not batched with the next',
      );
    });

    it('creates nothing more while the creations it expects are not observed, and goes on once they are', async () => {
      const h = await setup(set(3));
      await h.reconcile('web');
      h.client.clearActions();

      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writes(), [], 'the cache shows no pod yet, but three are on their way');
      assert.equal(h.status.last('web')?.replicas, 0);

      h.observeArrivals();
      await h.cluster.sync();
      assert.ok(h.expectations.satisfied(KEY));
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writes(), []);
      assert.equal(h.status.last('web')?.replicas, 3);
    });

    // Upstream TestSlowStart's shape: batches of 1, 2, 4, ...; the first batch with a failure is the last.
    const slowStart: [succeeding: number, calls: number][] = [
      [0, 1],
      [1, 3],
      [2, 3],
      [3, 7],
      [6, 7],
      [7, 10],
    ];
    for (const [succeeding, calls] of slowStart) {
      it(`10 pods to create, the quota refusing all after ${succeeding}: ${calls} creates in slow-start batches`, async () => {
        const h = await setup(set(10));
        h.client.fail({ verb: 'create', kind: 'Pod' }, quota(), { after: succeeding });
        await assert.rejects(h.reconcile('web'), /creating pods failed: .*exceeded quota/);
        assert.equal(h.client.writes({ verb: 'create' }).length, calls);
        assert.equal(h.expectations.get(KEY)?.adds, succeeding, 'expects only the pods really created');
      });
    }

    it('a refused create: a FailedCreate Warning, ReplicaFailure in the status, and an error to retry with', async () => {
      const h = await setup(set(2));
      h.client.fail({ verb: 'create', kind: 'Pod' }, quota());
      await assert.rejects(
        h.reconcile('web'),
        /creating pods failed: POST \/api\/v1\/namespaces\/ns\/pods: pods "web-" is forbidden: exceeded quota/,
      );
      assert.deepEqual(h.eventSummary(), ['Warning FailedCreate']);
      const status = h.status.last('web');
      const failure = findCondition(status?.conditions, 'ReplicaFailure');
      assert.equal(failure?.status, 'True');
      assert.equal(failure?.reason, 'FailedCreate');
      assert.match(failure?.message ?? '', /exceeded quota/);
      assert.equal(findCondition(status?.conditions, 'Ready')?.reason, 'FailedCreate');
      assert.ok(h.expectations.satisfied(KEY), 'no creation is awaited');
    });

    it('a create refused because the namespace is terminating is no failure to report', async () => {
      const h = await setup(set(2));
      const terminating = new ApiError(
        403,
        'Forbidden',
        'unable to create new content in namespace ns because it is being terminated',
        { causes: [{ reason: 'NamespaceTerminating', message: 'namespace ns is being terminated' }] },
      );
      h.client.fail({ verb: 'create', kind: 'Pod' }, terminating);
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.eventSummary(), []);
      assert.equal(findCondition(h.status.last('web')?.conditions, 'ReplicaFailure'), undefined);
    });
  });

  describe('deleting pods', () => {
    // Pods tied on every criterion go in name order; the names are such that this order alone would
    // pick other pods, so only the criterion a case shows (as the cache has it) picks its victims.
    const ready = (since = NOW - HOUR): PodOptions => ({ node: 'n1', readySince: since });
    const cases: { what: string; replicas: number; pods: [string, PodOptions][]; deleted: string[] }[] = [
      {
        what: 'unscheduled, then Pending, then not ready before running and ready',
        replicas: 1,
        pods: [
          ['running-ready', ready()],
          ['not-ready', { node: 'n1' }],
          ['pending', { node: 'n1', phase: 'Pending' }],
          ['unscheduled', { phase: 'Pending' }],
        ],
        deleted: ['unscheduled', 'pending', 'not-ready'],
      },
      {
        what: 'the pod ready for less time',
        replicas: 1,
        pods: [
          ['long-ready', ready(NOW - HOUR)],
          ['rookie', ready(NOW - 10_000)],
        ],
        deleted: ['rookie'],
      },
      {
        what: 'the lower pod-deletion-cost first',
        replicas: 2,
        pods: [
          ['dear', { ...ready(), deletionCost: '1000' }],
          ['spare', { ...ready(), deletionCost: '-5' }],
          ['plain', ready()],
        ],
        deleted: ['spare'],
      },
      {
        what: 'more restarts first',
        replicas: 1,
        pods: [
          ['calm', { ...ready(), restarts: [0] }],
          ['crashy', { ...ready(), restarts: [7] }],
        ],
        deleted: ['crashy'],
      },
      {
        what: 'the newer of two otherwise equal pods',
        replicas: 1,
        pods: [
          ['older', { node: 'n1', readySince: true, created: NOW - 2 * HOUR }],
          ['young', { node: 'n1', readySince: true, created: NOW - 60_000 }],
        ],
        deleted: ['young'],
      },
    ];
    for (const c of cases) {
      it(`scales down: ${c.what}`, async () => {
        const h = await setup(set(c.replicas), ...c.pods.map(([name, options]) => ownedPod(name, options)));
        assert.deepEqual(await h.reconcile('web'), { requeueAfterMs: 1000 });
        assert.deepEqual(
          h.client.writeSummary(),
          c.deleted.map((name) => `delete Pod ${name}`),
        );
        for (const { name, body } of h.client.writes()) {
          assert.deepEqual(body, { preconditions: { uid: name } }, 'deleted by uid: never a namesake');
        }
        assert.deepEqual(
          h.eventSummary(),
          c.deleted.map(() => 'Normal SuccessfulDelete'),
        );
        assert.deepEqual(
          [...(h.expectations.get(KEY)?.pendingDeletions ?? [])].sort(),
          [...c.deleted].sort(),
        );
      });
    }

    it('a pod already gone is no failure; another refused delete is', async () => {
      const h = await setup(set(0), ownedPod('a', ready()), ownedPod('b', ready()));
      h.cluster.server.delete(CoreTypes.Pod, 'ns', 'a');
      h.client.fail({ verb: 'delete', name: 'b' }, new ApiError(500, 'InternalError', 'etcd timed out'));
      await assert.rejects(h.reconcile('web'), /deleting pods failed: .*etcd timed out/);
      assert.deepEqual(h.eventSummary(), ['Warning FailedDelete']);
      assert.equal(findCondition(h.status.last('web')?.conditions, 'ReplicaFailure')?.reason, 'FailedDelete');
      assert.ok(h.expectations.satisfied(KEY), 'no deletion that did not happen is awaited');
    });
  });

  describe('adoption and release', () => {
    it('adopts a matching orphan after a live read of the set, and waits for it to arrive', async () => {
      const h = await setup(set(1), orphan('stray', { app: 'web' }, { node: 'n1', readySince: true }));
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(
        h.client.actions.map((a) => `${a.verb} ${a.kind} ${a.name}`),
        ['get BasicReplicaSet web', 'patch Pod stray'],
        'no create: the orphan is the replica',
      );
      assert.ok(
        testsResourceVersion(h.client.writes({ verb: 'patch' })[0]?.body),
        'decided on the cached copy: the adoption tests its resourceVersion',
      );
      const adopted = await h.cluster.server.get(CoreTypes.Pod, 'ns', 'stray');
      assert.deepEqual(adopted.metadata?.labels, { app: 'web', ...MARKER });
      assert.deepEqual(adopted.metadata?.ownerReferences, [controllerReference(set(1), BASIC_REPLICA_SET)]);
      assert.ok(h.claimedArrivals.waitFor(KEY) > 0, 'its arrival in the managed pod cache is awaited');
      assert.equal(h.expectations.get(KEY), undefined, 'by its uid, not as a creation');
      assert.equal(h.status.last('web')?.replicas, 1);
    });

    it('adopts a pod that two reconciles see as an orphan once, and deletes the surplus as soon as it arrives', async () => {
      const running = { node: 'n1', readySince: NOW - HOUR };
      const h = await setup(
        set(3),
        ownedPod('a', running),
        ownedPod('b', running),
        ownedPod('c', running),
        orphan('extra', { app: 'web' }, running),
      );
      h.observeArrivals();
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary(), ['patch Pod extra']);
      // A second reconcile before either pod cache has seen the adoption: the metadata cache still
      // shows the pod as an orphan, the managed cache does not have it yet (the double sighting).
      h.client.clearActions();
      await h.reconcile('web');
      const adopted = h.cluster.server.get(CoreTypes.Pod, 'ns', 'extra');
      assert.equal(controllerRefOf(adopted)?.uid, set(3).metadata.uid, 'the pod stays adopted');
      assert.deepEqual(h.client.writes({ verb: 'delete' }), [], 'no deletion before the adopted pod arrives');

      await h.cluster.sync(); // the pod arrives in the managed cache, once
      h.client.clearActions();
      await h.reconcile('web');
      assert.deepEqual(
        h.client.writes().map((w) => w.verb),
        ['delete'],
        `the surplus goes once the pod arrived, not after a timeout (expectations: ${JSON.stringify(h.expectations.get(KEY))})`,
      );
    });

    it('does not adopt for a set the live read shows deleted', async () => {
      const rs = set(1);
      rs.metadata.finalizers = ['example.com/hold'];
      const h = await setup(rs, orphan('stray', { app: 'web' }));
      h.cluster.server.delete(BASIC_REPLICA_SET, 'ns', 'web'); // the cache has not seen it yet
      await assert.rejects(h.reconcile('web'), /has just been deleted/);
      assert.deepEqual(h.client.writes(), []);
    });

    it('re-adopts an orphan that still has the marker and scales in the same reconcile', async () => {
      const h = await setup(set(3), ownedPod('a'), orphan('kept', { app: 'web', ...MARKER }));
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary(), ['patch Pod kept', 'create Pod web-00001']);
      assert.ok(
        testsResourceVersion(h.client.writes({ verb: 'patch' })[0]?.body),
        'decided on the cached copy: the adoption tests its resourceVersion',
      );
      assert.equal(h.expectations.get(KEY)?.adds, 1, 'only the created pod is awaited');
    });

    it('marks its own pod that lost the marker instead of replacing it', async () => {
      const unmarked = ownedPod('a');
      unmarked.metadata!.labels = { app: 'web' };
      const h = await setup(set(1), unmarked);
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary(), ['patch Pod a']);
      const marked = h.cluster.server.get(CoreTypes.Pod, 'ns', 'a');
      assert.deepEqual(marked.metadata?.labels, { app: 'web', ...MARKER });
    });

    it('releases a pod that stopped matching (its owner reference and the marker go) and replaces it', async () => {
      const moved = ownedPod('moved');
      moved.metadata!.labels = { app: 'other', ...MARKER };
      const h = await setup(set(1), moved);
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary(), ['patch Pod moved', 'create Pod web-00001']);
      const released = h.cluster.server.get(CoreTypes.Pod, 'ns', 'moved');
      assert.deepEqual(released.metadata?.labels, { app: 'other' });
      assert.equal(released.metadata?.ownerReferences, undefined);
    });

    it('adopts a matching orphan, then deletes the surplus, never the costliest pod, and leaves other pods alone', async () => {
      const running = { node: 'n1', readySince: NOW - HOUR };
      const h = await setup(
        set(3),
        ownedPod('a', running),
        ownedPod('b', running),
        ownedPod('c', running),
        orphan('keeper', { app: 'web' }, { ...running, deletionCost: '1000' }),
        orphan('stray', { app: 'web-stray' }, running),
      );
      await h.reconcile('web');
      assert.deepEqual(
        h.client.writeSummary(),
        ['patch Pod keeper'],
        'no deletion before the adopted pod arrives',
      );

      h.observeArrivals();
      await h.cluster.sync();
      h.client.clearActions();
      await h.reconcile('web');
      const [deleted, ...more] = h.client.writes();
      assert.equal(deleted?.verb, 'delete');
      assert.deepEqual(more, []);
      assert.notEqual(deleted?.name, 'keeper', 'the adopted pod (the costliest to delete) stays');
      const stray = h.cluster.server.get(CoreTypes.Pod, 'ns', 'stray');
      assert.equal(stray.metadata?.ownerReferences, undefined, 'a pod that does not match is not adopted');
      assert.deepEqual(stray.metadata?.labels, { app: 'web-stray' });
    });
  });

  it('an invalid selector: a Warning, a status saying why, no writes and no requeue', async () => {
    const rs = set(2, { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: [] }] } });
    const h = await setup(rs);
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writes(), []);
    assert.deepEqual(h.eventSummary(), ['Warning InvalidSpec']);
    const failure = findCondition(h.status.last('web')?.conditions, 'ReplicaFailure');
    assert.match(
      failure?.message ?? '',
      /invalid spec: matchExpressions\[app\]: operator In needs at least one value/,
    );
  });

  it('counts a ready pod as available only after minReadySeconds, and looks again when it will be', async () => {
    const h = await setup(
      set(3, { minReadySeconds: 10 }),
      ownedPod('available', { node: 'n1', readySince: NOW - 20_000 }),
      ownedPod('just-ready', { node: 'n1', readySince: NOW - 4000 }),
      ownedPod('not-ready', { node: 'n1' }),
      ownedPod('terminating', { node: 'n1', readySince: NOW - HOUR, deleting: true }),
    );
    assert.deepEqual(await h.reconcile('web'), { requeueAfterMs: 6001 });
    assert.deepEqual(h.client.writes(), []);
    const { conditions, ...counts } = h.status.last('web') ?? {};
    assert.deepEqual(counts, {
      replicas: 3,
      activeReplicas: 3,
      terminatingReplicas: 1,
      readyReplicas: 2,
      availableReplicas: 1,
      observedGeneration: 1,
      selector: 'app=web',
    });
    assert.equal(findCondition(conditions, 'Ready')?.status, 'False');

    mock.timers.tick(6001);
    assert.equal(await h.reconcile('web'), undefined, 'no pod left waiting on minReadySeconds');
    assert.equal(h.status.last('web')?.availableReplicas, 2);
  });
});
