import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type {
  V1Deployment,
  V1Job,
  V1PersistentVolumeClaim,
  V1Pod,
  V1ReplicaSet,
} from '@kubernetes/client-node';
import { runOk } from '../../../e2e/providers/exec.ts';
import { KWOK_PATCHES } from '../../../e2e/providers/local/toolchain/source-patches.ts';
import { patchedSourceDir, VERSIONS } from '../../../e2e/providers/local/toolchain.ts';
import { testClient, testCluster } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';

const isReady = (pod: V1Pod) =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

describe('the local control plane', () => {
  let client: KubeClient;
  let ns: string;

  before(async () => {
    client = await testClient();
    ns = await createNamespace(client, 'foundation');
  });
  after(async () => {
    await deleteNamespace(client, ns);
  });

  it('reports the real server version to kubectl', async (t) => {
    const info = await testCluster();
    if (info.provider !== 'local') {
      t.skip('version pin applies to the local provider');
      return;
    }
    const out = JSON.parse(
      await runOk(info.kubectl, ['--kubeconfig', info.kubeconfig, 'version', '-o', 'json']),
    ) as {
      serverVersion: { gitVersion: string; major: string; minor: string };
    };
    assert.equal(out.serverVersion.gitVersion, VERSIONS.kubernetes);
    assert.equal(out.serverVersion.major, '1');
    assert.equal(out.serverVersion.minor, VERSIONS.kubernetes.split('.')[1]);
  });

  it('builds kwok from its released source with the source patches applied', async (t) => {
    const info = await testCluster();
    if (info.provider !== 'local') {
      t.skip('the local provider builds kwok');
      return;
    }
    const source = patchedSourceDir('sigs.k8s.io/kwok', VERSIONS.kwok);
    for (const patch of KWOK_PATCHES) {
      const text = readFileSync(join(source, patch.file), 'utf8');
      assert.ok(text.includes(patch.replace), `${patch.file} is patched`);
      assert.ok(!text.includes(patch.find), `${patch.file} keeps no upstream text`);
    }
  });

  it('runs a Deployment whose pods become Ready, and garbage-collects it on delete', async () => {
    const labels = { app: 'web' };
    await client.create<V1Deployment>(CoreTypes.Deployment, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: ns },
      spec: {
        replicas: 3,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
        },
      },
    });
    const pods = await waitFor(
      '3 Ready pods',
      async () => {
        const list = await client.list<V1Pod>(CoreTypes.Pod, { namespace: ns, labelSelector: 'app=web' });
        return list.items.length === 3 && list.items.every(isReady) ? list.items : undefined;
      },
      { timeoutMs: 90_000 },
    );
    assert.ok(
      pods.every((p) => p.spec?.nodeName?.startsWith('kwok-node-')),
      'scheduled onto kwok nodes',
    );
    const rs = await client.list<V1ReplicaSet>(CoreTypes.ReplicaSet, { namespace: ns });
    assert.equal(rs.items.length, 1);

    await client.delete(CoreTypes.Deployment, ns, 'web', { propagationPolicy: 'Background' });
    await waitFor(
      'the garbage collector to remove the ReplicaSet and its pods',
      async () => {
        const [sets, left] = await Promise.all([
          client.list<V1ReplicaSet>(CoreTypes.ReplicaSet, { namespace: ns }),
          client.list<V1Pod>(CoreTypes.Pod, { namespace: ns, labelSelector: 'app=web' }),
        ]);
        return sets.items.length === 0 && left.items.length === 0;
      },
      { timeoutMs: 90_000 },
    );
  });

  it('binds a PersistentVolumeClaim and completes a Job', async () => {
    await client.create<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: ns },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    await client.create<V1Job>(CoreTypes.Job, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'once', namespace: ns },
      spec: {
        backoffLimit: 0,
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [{ name: 'work', image: 'busybox:1.36', command: ['true'] }],
            volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
          },
        },
      },
    });
    const claim = await waitFor(
      'the claim to bind',
      async () => {
        const pvc = await client.get<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim, ns, 'data');
        return pvc.status?.phase === 'Bound' ? pvc : undefined;
      },
      { timeoutMs: 90_000 },
    );
    assert.ok(claim.spec?.volumeName, 'bound to a volume');
    const job = await waitFor(
      'the Job to complete',
      async () => {
        const j = await client.get<V1Job>(CoreTypes.Job, ns, 'once');
        return j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True')
          ? j
          : undefined;
      },
      { timeoutMs: 120_000 },
    );
    assert.equal(job.status?.succeeded, 1);
  });
});
