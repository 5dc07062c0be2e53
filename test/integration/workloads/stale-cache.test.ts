// The BasicReplicaSet controller on caches that lag the API server, as kube-controller-manager
// 1.36's stale-cache guard (ConsistencyStore, StaleControllerConsistencyReplicaSet) expects them to:
// every watch of the manager delivers its events LAG_MS late, longer than the controller's own
// requeue after a change (1 s), so it reconciles again before its cache shows its own creates,
// deletes, adoptions, releases and status writes. It must still create and delete exactly what each
// step needs: no second create or delete for a write the cache has not shown yet (docs/runtime.md,
// "Stale caches and kube-controller-manager's ConsistencyStore").
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { testClient } from '../../../e2e/support/cluster.ts';
import { installCrds } from '../../../e2e/support/crds.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { readQueue } from '../../../e2e/support/queue-metrics.ts';
import { sleep, waitFor } from '../../../e2e/support/wait.ts';
import {
  BASIC_REPLICA_SET,
  type BasicReplicaSet,
  REPLICA_SET_POD_LABEL,
  REPLICA_SET_POD_VALUE,
} from '../../../src/apis/index.ts';
import {
  CONTROLLER_NAME,
  type PodInformers,
  podInformers,
  registerBasicReplicaSetController,
} from '../../../src/controllers/basicreplicaset/index.ts';
import { Informer } from '../../../src/runtime/cache/informer.ts';
import type { KubeClient, WatchEvent, WatchOptions } from '../../../src/runtime/client/kube-client.ts';
import { controllerRefOf, type KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../../../src/runtime/client/resource.ts';
import type { Manager } from '../../../src/runtime/manager/manager.ts';
import { testLogger } from '../../support/log.ts';
import { startTestManager } from '../../support/manager.ts';

const LAG_MS = 1_500;
const APP = 'web';
const PAUSE = 'registry.k8s.io/pause:3.10';

/**
 * Makes every watch of `client` deliver its events `lagMs` late, in order (the real stream is read
 * as fast as it comes, so the lag does not add up): the manager's informers then really lag behind
 * the server, while its writes and live reads stay current.
 */
function lagWatches(client: KubeClient, lagMs: number): void {
  const watch = client.watch.bind(client);
  client.watch = <T extends KubeObject>(type: ResourceType, options?: WatchOptions) =>
    delayed(watch<T>(type, options), lagMs);
}

async function* delayed<T>(
  events: AsyncIterable<WatchEvent<T>>,
  lagMs: number,
): AsyncGenerator<WatchEvent<T>> {
  const pending: { dueAt: number; event: WatchEvent<T> }[] = [];
  let ended = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  const pump = (async () => {
    try {
      for await (const event of events) {
        pending.push({ dueAt: Date.now() + lagMs, event });
        notify();
      }
    } catch (err) {
      failure = err;
    } finally {
      ended = true;
      notify();
    }
  })();
  for (;;) {
    const next = pending.shift();
    if (next) {
      const waitMs = next.dueAt - Date.now();
      if (waitMs > 0) await sleep(waitMs);
      yield next.event;
      continue;
    }
    if (ended) break;
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
  }
  await pump;
  if (failure !== undefined) throw failure;
}

const replicaSet = (namespace: string, replicas: number): BasicReplicaSet => ({
  apiVersion: BASIC_REPLICA_SET.apiVersion,
  kind: BASIC_REPLICA_SET.kind,
  metadata: { name: APP, namespace },
  spec: {
    replicas,
    selector: { matchLabels: { app: APP } },
    template: {
      metadata: { labels: { app: APP } },
      spec: { containers: [{ name: 'app', image: PAUSE }] },
    },
  },
});

/** What a prompt (not lagging) watch of the namespace saw the controller do. */
interface Tally {
  /** Pods the controller created (generateName `web-`), by uid. */
  created: Set<string>;
  /** Pods that were deleted (a deletion timestamp, or gone), by uid: only the controller deletes. */
  deleted: Set<string>;
}

/** `uid:resourceVersion` of the pods with our marker label: what the controller's pod cache should show. */
const signature = (pods: readonly KubeObject[]): string =>
  pods
    .filter((p) => p.metadata?.labels?.[REPLICA_SET_POD_LABEL] === REPLICA_SET_POD_VALUE)
    .map((p) => `${p.metadata?.uid}:${p.metadata?.resourceVersion}`)
    .sort()
    .join(',');

describe('BasicReplicaSet controller on caches that lag its own writes', () => {
  let client: KubeClient;
  let ns: string;
  let manager: Manager | undefined;
  const stop = new AbortController();

  before(async () => {
    client = await testClient();
    await installCrds();
    ns = await createNamespace(client, 'stale');
  });
  after(async () => {
    stop.abort();
    await manager?.stop();
    await deleteNamespace(client, ns);
  });

  it(`creates and deletes exactly what each step needs while its caches lag ${LAG_MS} ms`, {
    timeout: 180_000,
  }, async (t) => {
    const tally: Tally = { created: new Set(), deleted: new Set() };
    const prompt = new Informer<V1Pod>(client, CoreTypes.Pod, { namespaces: [ns] }, testLogger());
    prompt.addHandler({
      onAdd: (pod) => {
        if (pod.metadata?.generateName === `${APP}-`) tally.created.add(pod.metadata.uid ?? '');
        if (pod.metadata?.deletionTimestamp) tally.deleted.add(pod.metadata.uid ?? '');
      },
      onUpdate: (_old, pod) => {
        if (pod.metadata?.deletionTimestamp) tally.deleted.add(pod.metadata.uid ?? '');
      },
      onDelete: (pod) => tally.deleted.add(pod.metadata?.uid ?? ''),
    });
    prompt.start(stop.signal);
    await waitFor('the prompt pod watch to sync', () => prompt.hasSynced);

    let lagging: PodInformers | undefined;
    manager = await startTestManager([ns], (m) => {
      lagWatches(m.client, LAG_MS);
      registerBasicReplicaSetController(m);
      lagging = podInformers(m); // the controller's own (shared) pod caches
    });
    const metricsPort = manager.ports.metrics;
    assert.ok(metricsPort && lagging);
    const managed = lagging.managed;

    // Reconciles that ran while the controller's pod cache was behind the server (sampled): the lag
    // is real only if there are some.
    let staleReconciles = 0;
    const sampling = (async () => {
      let before = (await readQueue(metricsPort, CONTROLLER_NAME)).successes;
      let wasBehind = false;
      while (!stop.signal.aborted) {
        const behind = signature(prompt.list()) !== signature(managed.list());
        const now =
          (await readQueue(metricsPort, CONTROLLER_NAME).catch(() => undefined))?.successes ?? before;
        if (behind && wasBehind) staleReconciles += now - before;
        before = now;
        wasBehind = behind;
        await sleep(50);
      }
    })();

    const controlled = () =>
      prompt
        .list()
        .filter(
          (p) => p.metadata?.labels?.app === APP && !p.metadata.deletionTimestamp && controllerRefOf(p),
        );
    const scale = (replicas: number) =>
      client.patch(BASIC_REPLICA_SET, {
        namespace: ns,
        name: APP,
        patchType: 'merge',
        body: { spec: { replicas } },
      });
    /** The server has `n` live pods of the set, the lagging cache has caught up, and it stays so. */
    const settle = async (n: number) => {
      const steady = () =>
        controlled().length === n &&
        prompt.list().every((p) => !p.metadata?.deletionTimestamp) &&
        signature(prompt.list()) === signature(managed.list());
      await waitFor(`${n} live pods and a cache that caught up`, steady, {
        timeoutMs: 60_000,
        intervalMs: 100,
      });
      await sleep(LAG_MS + 1_000); // a second create or delete would show by now
      await waitFor(`${n} live pods still`, steady, { timeoutMs: 30_000, intervalMs: 100 });
      const status = await waitFor(`status.replicas ${n}`, async () => {
        const rs = await client.get<BasicReplicaSet>(BASIC_REPLICA_SET, ns, APP);
        return rs.status?.replicas === n ? rs.status : undefined;
      });
      assert.equal(status.replicas, n);
    };

    await client.create(BASIC_REPLICA_SET, replicaSet(ns, 3));
    await settle(3);
    await scale(1);
    await settle(1);
    await scale(4);
    await settle(4);
    // A hand-made pod with the set's labels, the costliest to delete: adopted, and one of the
    // set's own pods goes for it.
    await client.create<V1Pod>(CoreTypes.Pod, {
      metadata: {
        name: 'stray',
        namespace: ns,
        labels: { app: APP },
        annotations: { 'controller.kubernetes.io/pod-deletion-cost': '1000' },
      },
      spec: { containers: [{ name: 'app', image: PAUSE }] },
    });
    await settle(4);
    assert.equal(controllerRefOf(prompt.get(ns, 'stray') ?? {})?.name, APP, 'stray was adopted');
    // One of its pods relabelled out of the set: released, and replaced.
    const moved = controlled().find((p) => p.metadata?.name !== 'stray');
    assert.ok(moved?.metadata?.name);
    await client.patch(CoreTypes.Pod, {
      namespace: ns,
      name: moved.metadata.name,
      patchType: 'merge',
      body: { metadata: { labels: { app: 'elsewhere' } } },
    });
    await settle(4);
    const released = prompt.get(ns, moved.metadata.name);
    assert.equal(released && controllerRefOf(released), undefined, 'the relabelled pod was released');

    stop.abort();
    await sampling;
    t.diagnostic(
      `created ${tally.created.size}, deleted ${tally.deleted.size}, reconciles while the pod cache lagged: ${staleReconciles}`,
    );
    // 3, then 3 more for the scale from 1 to 4, then 1 for the released pod.
    assert.equal(tally.created.size, 7, 'pods created');
    // 2 for the scale from 3 to 1, then 1 for the adopted pod.
    assert.equal(tally.deleted.size, 3, 'pods deleted');
    assert.ok(staleReconciles > 0, 'some reconciles ran on a cache that lagged the server');
  });
});
