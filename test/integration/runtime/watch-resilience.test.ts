import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import {
  compactEtcd,
  etcdctl,
  etcdEndpoint,
  restartComponent,
  stopAllComponents,
} from '../../../e2e/providers/local/components.ts';
import { LocalProvider } from '../../../e2e/providers/local/index.ts';
import { testCluster } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import { Informer } from '../../../src/runtime/cache/informer.ts';
import { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { objectKey } from '../../../src/runtime/client/object.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { testLogger } from '../../support/log.ts';

const configMap = (namespace: string, name: string, value = 'v1'): V1ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, labels: { test: 'watch' } },
  data: { value },
});

async function serverState(client: KubeClient, namespace: string): Promise<string[]> {
  const list = await client.list<V1ConfigMap>(CoreTypes.ConfigMap, {
    namespace,
    labelSelector: 'test=watch',
  });
  return list.items.map((cm) => `${objectKey(cm)}@${cm.metadata?.resourceVersion}`).sort();
}

function cacheState(informer: Informer<V1ConfigMap>): string[] {
  return informer
    .list()
    .map((cm) => `${objectKey(cm)}@${cm.metadata?.resourceVersion}`)
    .sort();
}

describe('informer watch resilience', () => {
  let client: KubeClient;
  let ns: string;
  const controller = new AbortController();

  // Killing the API server would disturb every other test on the shared cluster: this file gets a
  // control plane of its own, which is stopped again afterwards.
  const CHAOS_CLUSTER = 'basic-operator-chaos';
  let local = false;

  before(async () => {
    local = (await testCluster()).provider === 'local';
    if (!local) return;
    const info = await new LocalProvider(CHAOS_CLUSTER).up();
    const kc = new KubeConfig();
    kc.loadFromFile(info.kubeconfig);
    client = new KubeClient(kc, { userAgent: 'basic-operator-tests' });
    ns = await createNamespace(client, 'watch');
  });
  after(async () => {
    controller.abort();
    if (!local) return;
    try {
      await deleteNamespace(client, ns);
    } finally {
      await stopAllComponents(CHAOS_CLUSTER);
    }
  });

  it('survives a kube-apiserver restart and a compacted etcd (410), seeing the deletes it missed', async (t) => {
    if ((await testCluster()).provider !== 'local')
      return t.skip('needs control over the local control plane');
    for (let i = 0; i < 5; i++) await client.create(CoreTypes.ConfigMap, configMap(ns, `cm-${i}`));
    const informer = new Informer<V1ConfigMap>(
      client,
      CoreTypes.ConfigMap,
      { namespaces: [ns], labelSelector: 'test=watch' },
      testLogger(),
      { backoff: undefined },
    );
    const deleted: string[] = [];
    informer.addHandler({ onDelete: (cm) => deleted.push(cm.metadata?.name ?? '') });
    informer.start(controller.signal);
    await informer.waitForSync();
    assert.equal(informer.list().length, 5);

    const endpoint = etcdEndpoint(CHAOS_CLUSTER);
    await restartComponent(CHAOS_CLUSTER, 'kube-apiserver', async () => {
      // While the API server is down: two objects vanish, and etcd forgets the history the watch needs.
      await etcdctl(['del', `/registry/configmaps/${ns}/cm-0`], endpoint);
      await etcdctl(['del', `/registry/configmaps/${ns}/cm-1`], endpoint);
      await compactEtcd(endpoint);
    });
    await waitFor(
      'the API server to answer again',
      () => client.list(CoreTypes.Namespace, { limit: 1 }).then(() => true),
      {
        timeoutMs: 60_000,
      },
    );
    await client.create(CoreTypes.ConfigMap, configMap(ns, 'cm-new'));
    await client.update(CoreTypes.ConfigMap, {
      ...(await client.get<V1ConfigMap>(CoreTypes.ConfigMap, ns, 'cm-2')),
      data: { value: 'v2' },
    });

    await waitFor(
      'the cache to equal the server',
      async () => JSON.stringify(cacheState(informer)) === JSON.stringify(await serverState(client, ns)),
      { timeoutMs: 60_000 },
    );
    assert.deepEqual(deleted.sort(), ['cm-0', 'cm-1']);
    const stats = informer.reflectors[0]!.stats;
    assert.ok(stats.gone >= 1, `expected a 410 relist, stats: ${JSON.stringify(stats)}`);
    assert.ok(stats.lists >= 2);
    assert.equal(informer.get(ns, 'cm-2')?.data?.value, 'v2');
  });

  it('restarts a stream that has gone quiet (watchdog) without losing events', async (t) => {
    if (!local) return t.skip('runs on the local provider');
    const informer = new Informer<V1ConfigMap>(
      client,
      CoreTypes.ConfigMap,
      { namespaces: [ns], labelSelector: 'test=watch' },
      testLogger(),
      {
        watchdogMs: 300,
      },
    );
    informer.start(controller.signal);
    await informer.waitForSync();
    await waitFor('a watchdog restart', () => informer.reflectors[0]!.stats.watchdogRestarts >= 2, {
      timeoutMs: 10_000,
    });
    await client.create(CoreTypes.ConfigMap, configMap(ns, 'after-watchdog'));
    await waitFor('the new object in the cache', () => informer.get(ns, 'after-watchdog') !== undefined, {
      timeoutMs: 10_000,
    });
    assert.equal(
      informer.reflectors[0]!.stats.gone,
      0,
      'a quiet restart resumes from the last resourceVersion without a relist',
    );
  });
});
