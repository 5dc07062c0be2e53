import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { testClient, testKubeConfig } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { sleep, waitFor } from '../../../e2e/support/wait.ts';
import { Informer } from '../../../src/runtime/cache/informer.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { controllerRefOf, type KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import type { Controller } from '../../../src/runtime/controller/controller.ts';
import { requestKey } from '../../../src/runtime/controller/reconciler.ts';
import { ControllerExpectations } from '../../../src/runtime/expectations.ts';
import { controllerReference } from '../../../src/runtime/write/owner-refs.ts';
import { testLogger } from '../../support/log.ts';
import { startTestManager, TEST_CONTROLLERS_USER_AGENT } from '../../support/manager.ts';
import { LaggingClient } from './lagging-client.ts';

/**
 * A fan-out controller keeps CHILDREN child ConfigMaps per parent ConfigMap, reading the children from
 * a cache whose watch events arrive LAG_MS late, while the parents are touched every TOUCH_EVERY_MS
 * (each touch is a reconcile). Expectations must hold it at exactly CHILDREN per parent; without them
 * the same controller creates more, which shows the lag is real.
 */
const CHILDREN = 5;
const LAG_MS = 1_500;
const TOUCH_EVERY_MS = 100;
const TOUCH_FOR_MS = 2_000;
const PARENTS = ['parent-a', 'parent-b'];

interface FanOutRun {
  /** Creates the (prompt) counting watch saw, per parent. */
  createdPerParent: Record<string, number>;
  /** Children per parent on the server after settling. */
  onServerPerParent: Record<string, number>;
  reconciles: number;
  /** Reconciles that found the expectations unsatisfied and did nothing. */
  unsatisfied: number;
}

const parentConfigMap = (namespace: string, name: string): V1ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, labels: { test: 'parent' } },
});

const childOf = (parent: V1ConfigMap): V1ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    generateName: `${parent.metadata?.name}-`,
    namespace: parent.metadata?.namespace,
    labels: { test: 'child', parent: parent.metadata?.name ?? '' },
    ownerReferences: [controllerReference(parent, CoreTypes.ConfigMap)],
  },
});

const parentOf = (child: KubeObject): string => controllerRefOf(child)?.name ?? '';

async function runFanOut(client: KubeClient, ns: string, useExpectations: boolean): Promise<FanOutRun> {
  const stop = new AbortController();
  try {
    return await fanOut(client, ns, useExpectations, stop.signal);
  } finally {
    stop.abort(); // the test's own informers
  }
}

async function fanOut(
  client: KubeClient,
  ns: string,
  useExpectations: boolean,
  signal: AbortSignal,
): Promise<FanOutRun> {
  const scope = { namespaces: [ns], labelSelector: 'test=child' };
  const laggingChildren = new Informer<V1ConfigMap>(
    new LaggingClient(await testKubeConfig(), LAG_MS),
    CoreTypes.ConfigMap,
    scope,
    testLogger(),
  );
  const createdPerParent: Record<string, number> = {};
  const counter = new Informer<V1ConfigMap>(client, CoreTypes.ConfigMap, scope, testLogger());
  counter.addHandler({
    onAdd: (child) => {
      createdPerParent[parentOf(child)] = (createdPerParent[parentOf(child)] ?? 0) + 1;
    },
  });

  const expectations = new ControllerExpectations({ log: testLogger() });
  let reconciles = 0;
  let unsatisfied = 0;
  let controller: Controller | undefined;
  // The child watch of the controller: counts creations off and wakes the parent, both late.
  laggingChildren.addHandler({
    onAdd: (child) => {
      const request = { namespace: ns, name: parentOf(child) };
      expectations.creationObserved(requestKey(request));
      controller?.enqueue(request);
    },
  });
  laggingChildren.start(signal);
  counter.start(signal);
  await waitFor('the test informers to sync', () => laggingChildren.hasSynced && counter.hasSynced);

  const manager = await startTestManager(
    [ns],
    (m) => {
      const configMaps = m.cache.informerFor<V1ConfigMap>(CoreTypes.ConfigMap);
      controller = m
        .controller(useExpectations ? 'fan-out' : 'fan-out-without-expectations')
        .for(CoreTypes.ConfigMap, {
          create: (cm) => cm.metadata?.labels?.test === 'parent',
          update: (_old, cm) => cm.metadata?.labels?.test === 'parent',
          delete: (cm) => cm.metadata?.labels?.test === 'parent',
        })
        .complete({
          async reconcile(request) {
            reconciles++;
            const key = requestKey(request);
            const parent = configMaps.get(request.namespace, request.name);
            if (!parent) {
              expectations.deleteExpectations(key);
              return undefined;
            }
            if (useExpectations && !expectations.satisfied(key)) {
              unsatisfied++;
              return undefined;
            }
            const missing = CHILDREN - laggingChildren.byOwner(parent.metadata?.uid ?? '').length;
            if (missing <= 0) return undefined;
            if (useExpectations) expectations.expectCreations(key, missing);
            const results = await Promise.allSettled(
              Array.from({ length: missing }, () => m.client.create(CoreTypes.ConfigMap, childOf(parent))),
            );
            const failed = results.filter((r) => r.status === 'rejected');
            // A failed create will never be observed: stop waiting for it.
            if (useExpectations && failed.length > 0) expectations.lowerExpectations(key, failed.length);
            if (failed[0]) throw failed[0].reason;
            return undefined;
          },
        });
    },
    [],
    { userAgent: TEST_CONTROLLERS_USER_AGENT },
  );

  try {
    for (const name of PARENTS) await client.create(CoreTypes.ConfigMap, parentConfigMap(ns, name));
    // Touch the parents while the children's events are still on their way: a reconcile each time.
    for (let i = 0; i * TOUCH_EVERY_MS < TOUCH_FOR_MS; i++) {
      await Promise.all(
        PARENTS.map((name) =>
          client.patch(CoreTypes.ConfigMap, {
            namespace: ns,
            name,
            patchType: 'merge',
            body: {
              metadata: { annotations: { touch: String(i) } },
            },
          }),
        ),
      );
      await sleep(TOUCH_EVERY_MS);
    }
    // Settled: the lagging cache has caught up with every create, and no reconcile is pending.
    const settled = () =>
      laggingChildren.list().length === counter.list().length &&
      controller!.queue.len() === 0 &&
      controller!.queue.inFlight() === 0;
    await waitFor('the lagging cache to catch up', settled, { timeoutMs: 30_000 });
    await sleep(LAG_MS + 500);
    await waitFor('the lagging cache to catch up again', settled, { timeoutMs: 30_000 });
  } finally {
    await manager.stop();
  }

  const onServer = await client.list<V1ConfigMap>(CoreTypes.ConfigMap, {
    namespace: ns,
    labelSelector: 'test=child',
  });
  const onServerPerParent: Record<string, number> = {};
  for (const child of onServer.items) {
    onServerPerParent[parentOf(child)] = (onServerPerParent[parentOf(child)] ?? 0) + 1;
  }
  return { createdPerParent, onServerPerParent, reconciles, unsatisfied };
}

describe('controller expectations against a lagging cache', () => {
  let client: KubeClient;
  const namespaces: string[] = [];

  before(async () => {
    client = await testClient();
  });
  after(async () => {
    await Promise.all(namespaces.map((ns) => deleteNamespace(client, ns)));
  });

  const exactly = Object.fromEntries(PARENTS.map((name) => [name, CHILDREN]));

  it(`creates exactly ${CHILDREN} children per parent while the cache lags ${LAG_MS} ms`, {
    timeout: 60_000,
  }, async (t) => {
    const ns = await createNamespace(client, 'expect');
    namespaces.push(ns);
    const run = await runFanOut(client, ns, true);
    t.diagnostic(`with expectations: ${JSON.stringify(run)}`);
    assert.deepEqual(run.createdPerParent, exactly, 'creates seen by the watch');
    assert.deepEqual(run.onServerPerParent, exactly, 'children on the server');
    assert.ok(run.unsatisfied > 0, 'reconciles in the lag window were held back by the expectations');
  });

  it('over-creates under the same conditions without expectations (the lag is real)', {
    timeout: 60_000,
  }, async (t) => {
    const ns = await createNamespace(client, 'expect');
    namespaces.push(ns);
    const run = await runFanOut(client, ns, false);
    t.diagnostic(`without expectations: ${JSON.stringify(run)}`);
    for (const name of PARENTS) {
      assert.ok((run.onServerPerParent[name] ?? 0) > CHILDREN, `${name} got more than ${CHILDREN} children`);
    }
  });
});
