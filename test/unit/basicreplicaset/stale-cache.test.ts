// Reconciles of a BasicReplicaSet on a cache that does not show the controller's own last writes yet
// (the FakeCluster's caches stand still until sync()): what kube-controller-manager 1.36 holds a sync
// for (ConsistencyStore), our bookkeeping must make harmless. Creates and adoptions are in
// reconciler.test.ts; here the deletes and releases.
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
import { controllerRefOf, type KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { eventsFor } from '../../../src/runtime/events/index.ts';
import { ControllerExpectations } from '../../../src/runtime/expectations.ts';
import { controllerReference } from '../../../src/runtime/write/owner-refs.ts';
import { FakeCluster } from '../../support/fake/cluster.ts';
import { harness } from '../../support/fake/harness.ts';
import { pod } from './pods.ts';
import { replicaSet } from './sets.ts';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const KEY = 'ns/web';
const MARKER = { [REPLICA_SET_POD_LABEL]: 'true' };
const RUNNING = { node: 'n1', readySince: NOW - 3_600_000 };

function set(replicas: number): BasicReplicaSet {
  const rs = replicaSet('web', { app: 'web' });
  return { ...rs, metadata: { ...rs.metadata, generation: 1 }, spec: { ...rs.spec, replicas } };
}

function ownedPod(name: string, labels: Record<string, string> = { app: 'web', ...MARKER }): V1Pod {
  const p = pod(name, RUNNING);
  return {
    ...p,
    metadata: {
      ...p.metadata,
      namespace: 'ns',
      labels,
      ownerReferences: [controllerReference(set(1), BASIC_REPLICA_SET)],
    },
  };
}

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
  const observers = podObservers({ sets, otherPods: others, expectations, claimedArrivals, departures });
  managed.addHandler(observers.managed);
  others.addHandler(observers.others);
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
  return { ...h, expectations };
}

describe('BasicReplicaSetReconciler on a cache that lags its own writes', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: NOW }));
  afterEach(() => mock.timers.reset());

  it('deletes nothing more while the cache still shows the pods it deleted, and reports them gone once it does not', async () => {
    const h = await setup(set(1), ownedPod('a'), ownedPod('b'), ownedPod('c'));
    await h.reconcile('web');
    assert.equal(h.client.writes({ verb: 'delete' }).length, 2);
    h.client.clearActions();

    // The cache still shows three active pods: a sync that trusted it would delete two more.
    await h.reconcile('web');
    assert.deepEqual(h.client.writes(), [], 'the deletions it expects are not observed yet');

    await h.cluster.sync();
    assert.ok(h.expectations.satisfied(KEY));
    await h.reconcile('web');
    assert.deepEqual(h.client.writes(), []);
    assert.equal(h.status.last('web')?.replicas, 1);
  });

  it('releases and replaces a pod once while the cache still shows it as its own', async () => {
    const h = await setup(set(1), ownedPod('moved', { app: 'other', ...MARKER }));
    await h.reconcile('web');
    assert.deepEqual(h.client.writeSummary(), ['patch Pod moved', 'create Pod web-00001']);
    const released = h.cluster.server.get(CoreTypes.Pod, 'ns', 'moved');
    h.client.clearActions();

    // The cache still shows the pod controlled and marked, and not the replacement.
    await h.reconcile('web');
    assert.deepEqual(h.client.writes({ verb: 'create' }), [], 'no second replacement');
    assert.equal(
      h.cluster.server.get(CoreTypes.Pod, 'ns', 'moved').metadata?.resourceVersion,
      released.metadata?.resourceVersion,
      'the pod is not written again',
    );

    await h.cluster.sync();
    h.client.clearActions();
    await h.reconcile('web');
    assert.deepEqual(h.client.writes(), []);
    assert.equal(controllerRefOf(h.cluster.server.get(CoreTypes.Pod, 'ns', 'moved')), undefined);
    assert.equal(h.status.last('web')?.replicas, 1);
  });
});
