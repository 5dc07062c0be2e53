import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeConfig, type V1ConfigMap, type V1Deployment, type V1Pod } from '@kubernetes/client-node';
import {
  type Component,
  compactEtcd,
  etcdctl,
  etcdEndpoint,
  pidOf,
  restartComponent,
  stopAllComponents,
  stoppedComponents,
} from '../../../e2e/providers/local/components.ts';
import { LocalProvider } from '../../../e2e/providers/local/index.ts';
import { ControlPlaneSupervisor } from '../../../e2e/providers/local/supervisor.ts';
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

// Killing the API server or stalling etcd would disturb every other test on the shared cluster: this
// file gets a control plane of its own, which is stopped again afterwards.
const CHAOS_CLUSTER = 'basic-operator-chaos';
let local = false;
let client: KubeClient;
let ns = '';

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
  if (!local) return;
  try {
    // Unset when before() failed (the cluster did not come up): its components are stopped all the same.
    if (ns) await deleteNamespace(client, ns);
  } finally {
    await stopAllComponents(CHAOS_CLUSTER);
  }
});

describe('informer watch resilience', () => {
  const controller = new AbortController();
  after(() => controller.abort());

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

// What kubelet does for a real control plane, the local cluster's supervisor does while `npm test`
// runs: once, etcd waited 11 s for a busy disk, kube-controller-manager and kube-scheduler lost their
// leases and exited, and every later test that needed a pod made or scheduled failed.
describe("the local control plane's supervisor", () => {
  const lines: string[] = [];
  const started = (component: Component) => !stoppedComponents(CHAOS_CLUSTER).includes(component);

  it('starts kube-controller-manager and kube-scheduler again after a stalled etcd made them exit; pods are made and scheduled again', async (t) => {
    if (!local) return t.skip('runs on the local provider');
    const supervisor = new ControlPlaneSupervisor(CHAOS_CLUSTER, (line) => lines.push(line), 500).start();
    try {
      const etcd = pidOf('etcd', CHAOS_CLUSTER);
      process.kill(etcd, 'SIGSTOP');
      try {
        await waitFor(
          'kube-controller-manager and kube-scheduler to give up their leases and exit',
          () => supervisor.exits.length >= 2,
          { timeoutMs: 60_000 },
        );
      } finally {
        process.kill(etcd, 'SIGCONT');
      }
      assert.deepEqual(supervisor.exits.map((e) => e.component).sort(), [
        'kube-controller-manager',
        'kube-scheduler',
      ]);
      for (const exit of supervisor.exits) assert.match(exit.lastLog, /leaderelection lost/i, exit.component);
      assert.ok(
        lines.some((l) => /kube-controller-manager exited on its own; starting it again/.test(l)),
        lines.join('\n'),
      );

      await client.create<V1Deployment>(CoreTypes.Deployment, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'after-stall', namespace: ns },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'after-stall' } },
          template: {
            metadata: { labels: { app: 'after-stall' } },
            spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
          },
        },
      });
      await waitFor(
        "the Deployment's pod made by kube-controller-manager and bound by kube-scheduler",
        async () => {
          const pods = await client.list<V1Pod>(CoreTypes.Pod, {
            namespace: ns,
            labelSelector: 'app=after-stall',
          });
          return pods.items.some((p) => p.spec?.nodeName);
        },
        { timeoutMs: 120_000 },
      );
      assert.ok(started('kube-controller-manager') && started('kube-scheduler'));
    } finally {
      await supervisor.stop();
    }
  });

  it('leaves alone a component a test holds down', async (t) => {
    if (!local) return t.skip('runs on the local provider');
    const supervisor = new ControlPlaneSupervisor(CHAOS_CLUSTER, (line) => lines.push(line), 200).start();
    const exitsBefore = supervisor.exits.length;
    try {
      await restartComponent(CHAOS_CLUSTER, 'kube-scheduler', async () => {
        await new Promise((r) => setTimeout(r, 2_000));
        assert.ok(!started('kube-scheduler'), 'the supervisor started a held component');
      });
      assert.ok(started('kube-scheduler'), 'restartComponent starts it itself');
      assert.equal(supervisor.exits.length, exitsBefore);
    } finally {
      await supervisor.stop();
    }
  });

  it('up() starts kwok-controller again when it exits while up() waits for the node leases', async (t) => {
    if (!local) return t.skip('runs on the local provider');
    process.kill(pidOf('kwok-controller', CHAOS_CLUSTER), 'SIGKILL');
    await waitFor('kwok-controller to stop', () => !started('kwok-controller'), { timeoutMs: 30_000 });
    const up = new LocalProvider(CHAOS_CLUSTER).up();
    // kwok-controller gives up when the API server does not answer within about 31 s of its start,
    // as it did once in CI under load: here it is killed before it took the node leases.
    const first = await waitFor(
      'up() to start kwok-controller',
      () => (started('kwok-controller') ? pidOf('kwok-controller', CHAOS_CLUSTER) : undefined),
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    process.kill(first, 'SIGKILL');
    await up;
    assert.ok(started('kwok-controller'));
    assert.notEqual(pidOf('kwok-controller', CHAOS_CLUSTER), first, 'started again by up()');
  });
});
