// Tests stop their operator (the e2e suites uninstall it) before their namespace is gone, and a
// backup claim's finalizer then held the namespace Terminating for good: 16 of them after four runs
// on the kind cluster CI keeps (its node at 60% of a core idle, 10 to 17% once they were released),
// 32 on the local cluster after two. A later run releases them; the suites' teardown removes the
// operator's finalizers itself.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { V1Namespace, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { ClusterInfo } from '../../../e2e/providers/provider.ts';
import {
  releaseAbandonedNamespaces,
  TEST_NAMESPACE_LABEL,
} from '../../../e2e/support/abandoned-namespaces.ts';
import { testClient, testCluster } from '../../../e2e/support/cluster.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import { BACKUP_CLAIM_FINALIZER } from '../../../src/controllers/volumebackup/names.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';

describe("the suites' namespaces an earlier run abandoned", () => {
  let client: KubeClient;
  let cluster: ClusterInfo;
  const id = randomBytes(3).toString('hex');
  const ours = `bo-abandoned-${id}`;
  const someoneElses = `abandoned-${id}`;
  const aTests = `labelled-${id}`;
  const among = [ours, someoneElses, aTests];

  /** A namespace deleted while a claim in it holds a backup claim's finalizer, as a teardown left it. */
  async function abandon(namespace: string, labels: Record<string, string> = {}): Promise<void> {
    await client.create<V1Namespace>(CoreTypes.Namespace, { metadata: { name: namespace, labels } });
    await client.create<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim, {
      metadata: { name: 'backup-data', namespace, finalizers: [BACKUP_CLAIM_FINALIZER] },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    await client.delete(CoreTypes.Namespace, '', namespace);
    await waitFor(`namespace ${namespace} to report the claim's finalizer`, async () => {
      const ns = await client.get<V1Namespace>(CoreTypes.Namespace, '', namespace);
      return ns.status?.conditions?.some(
        (c) => c.type === 'NamespaceFinalizersRemaining' && c.status === 'True',
      );
    });
  }

  const claim = (namespace: string) =>
    client.get<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim, namespace, 'backup-data');
  const gone = async (namespace: string) =>
    (await client.list<V1Namespace>(CoreTypes.Namespace)).items.every((n) => n.metadata?.name !== namespace);

  before(async () => {
    client = await testClient();
    cluster = await testCluster();
    await abandon(ours);
    await abandon(someoneElses);
    await abandon(aTests, { [TEST_NAMESPACE_LABEL]: 'true' });
  });
  after(async () => {
    for (const namespace of [ours, someoneElses, aTests]) {
      await client
        .patch(CoreTypes.PersistentVolumeClaim, {
          namespace,
          name: 'backup-data',
          patchType: 'merge',
          body: { metadata: { finalizers: null } },
        })
        .catch(() => undefined);
    }
  });

  it('leaves a namespace alone while its teardown may still be under way (under two minutes)', async () => {
    assert.deepEqual(await releaseAbandonedNamespaces(cluster, { among }), []);
    assert.deepEqual((await claim(ours)).metadata?.finalizers, [BACKUP_CLAIM_FINALIZER]);
  });

  it("removes the operator's finalizers from a test's namespace Terminating longer, which then goes; not from anyone else's", async () => {
    // Two minutes on: only this test's own, so as not to race another test's teardown.
    const released = await releaseAbandonedNamespaces(cluster, { now: Date.now() + 180_000, among });
    assert.deepEqual(released.sort(), [ours, aTests].sort());
    await waitFor(
      `namespaces ${ours} and ${aTests} to be gone`,
      async () => (await gone(ours)) && (await gone(aTests)),
      {
        timeoutMs: 60_000,
      },
    );
    assert.deepEqual((await claim(someoneElses)).metadata?.finalizers, [BACKUP_CLAIM_FINALIZER]);
  });
});
