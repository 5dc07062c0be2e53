import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { testClient, testCluster } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { isTransient } from '../../../src/runtime/client/errors.ts';
import { KubeClient, type WatchEvent } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';

/** A kubeconfig for a plain-HTTP server URL without credentials. */
function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

/** `kubectl proxy` serving the test cluster's API under /prefixed/, as some proxies in front of clusters do. */
async function startPrefixedProxy(): Promise<{ proxy: ChildProcess; server: string }> {
  const info = await testCluster();
  const proxy = spawn(
    info.kubectl,
    ['--kubeconfig', info.kubeconfig, 'proxy', '--port=0', '--api-prefix=/prefixed/'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<string>((resolve, reject) => {
    let out = '';
    proxy.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /Starting to serve on [^:]+:(\d+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    proxy.once('exit', (code) => reject(new Error(`kubectl proxy exited with ${code}: ${out}`)));
  });
  return { proxy, server: `http://127.0.0.1:${port}/prefixed` };
}

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('KubeClient transport', () => {
  let proxy: ChildProcess | undefined;
  let client: KubeClient;
  let admin: KubeClient;
  let ns: string;

  before(async () => {
    admin = await testClient();
    ns = await createNamespace(admin, 'transport');
    const started = await startPrefixedProxy();
    proxy = started.proxy;
    client = new KubeClient(kubeConfigFor(started.server), { userAgent: 'basic-operator-tests' });
  });

  after(async () => {
    proxy?.kill();
    await deleteNamespace(admin, ns);
  });

  it('serves every verb and watches through a server URL with a path prefix', async () => {
    const watched: WatchEvent<V1ConfigMap>[] = [];
    const stop = new AbortController();
    const start = await client.list<V1ConfigMap>(CoreTypes.ConfigMap, { namespace: ns });
    const watching = (async () => {
      for await (const event of client.watch<V1ConfigMap>(CoreTypes.ConfigMap, {
        namespace: ns,
        resourceVersion: start.metadata?.resourceVersion,
        labelSelector: 'test=transport',
        signal: stop.signal,
      })) {
        if (event.type !== 'BOOKMARK') watched.push(event);
        if (watched.length === 3) stop.abort();
      }
    })().catch((err: unknown) => {
      if (!stop.signal.aborted) throw err;
    });

    // Larger than a socket read, so watch lines arrive split across chunks.
    const big = 'x'.repeat(200_000);
    const cm: V1ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: ns, labels: { test: 'transport' } },
      data: { big },
    };
    await client.create(CoreTypes.ConfigMap, cm);
    const read = await client.get<V1ConfigMap>(CoreTypes.ConfigMap, ns, 'cm');
    assert.equal(read.data?.big, big);
    await client.patch(CoreTypes.ConfigMap, {
      namespace: ns,
      name: 'cm',
      patchType: 'merge',
      body: { data: { small: 'y' } },
    });
    const listed = await client.list<V1ConfigMap>(CoreTypes.ConfigMap, {
      namespace: ns,
      labelSelector: 'test=transport',
    });
    assert.deepEqual(
      listed.items.map((c) => c.metadata?.name),
      ['cm'],
    );
    await client.delete(CoreTypes.ConfigMap, ns, 'cm');
    await watching;

    assert.deepEqual(
      watched.map((e) => e.type),
      ['ADDED', 'MODIFIED', 'DELETED'],
    );
    assert.equal(watched[0]?.object.data?.big, big);
    assert.equal(watched[1]?.object.data?.small, 'y');
  });

  it('reports an unreachable server as a transient error, not a TypeError (which counts as a panic)', async () => {
    const unreachable = new KubeClient(kubeConfigFor(`http://127.0.0.1:${await closedPort()}`));
    const err = await unreachable.get(CoreTypes.Namespace, undefined, 'default').then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof Error, String(err));
    assert.ok(!(err instanceof TypeError), `got a TypeError: ${err.message}`);
    assert.ok(isTransient(err), err.message);
    assert.match(err.message, /ECONNREFUSED/);
  });
});
