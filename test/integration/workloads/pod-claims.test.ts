import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { testClient } from '../../../e2e/support/cluster.ts';
import { installCrds } from '../../../e2e/support/crds.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { BASIC_REPLICA_SET, type BasicReplicaSet, REPLICA_SET_POD_LABEL } from '../../../src/apis/index.ts';
import { adoptPod, markPod } from '../../../src/controllers/basicreplicaset/pod-claims.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';

/**
 * The claim writes against the real API server, with no controller running: a set decides on the
 * copy of a pod in its cache, which the scheduler, the kubelet or a user may have changed since.
 */
describe('claiming pods for a BasicReplicaSet', () => {
  let client: KubeClient;
  let ns: string;
  let rs: BasicReplicaSet;

  const pod = (name: string, labels: Record<string, string>): V1Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels },
    spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
  });
  const touch = (name: string) =>
    client.patch(CoreTypes.Pod, {
      namespace: ns,
      name,
      patchType: 'merge',
      body: { metadata: { annotations: { touched: 'yes' } } },
    });

  before(async () => {
    await installCrds();
    client = await testClient();
    ns = await createNamespace(client, 'claims');
    rs = await client.create<BasicReplicaSet>(BASIC_REPLICA_SET, {
      apiVersion: BASIC_REPLICA_SET.apiVersion,
      kind: BASIC_REPLICA_SET.kind,
      metadata: { name: 'web', namespace: ns },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
        },
      },
    });
  });
  after(async () => {
    if (client && ns) await deleteNamespace(client, ns);
  });

  it('adopts an orphan that changed since the set read it (status and annotations are not its business)', async () => {
    const stale = await client.create<V1Pod>(CoreTypes.Pod, pod('changed', { app: 'web' }));
    await touch('changed');
    const adopted = await adoptPod(client, stale, rs);
    assert.equal(adopted?.written, true);
    assert.equal(adopted?.pod.metadata?.ownerReferences?.[0]?.uid, rs.metadata.uid);
    assert.equal(adopted?.pod.metadata?.labels?.[REPLICA_SET_POD_LABEL], 'true');
    assert.equal(adopted?.pod.metadata?.annotations?.touched, 'yes', 'the other change is kept');
  });

  it('adopting again from the stale orphan copy writes nothing and finds the pod claimed (a double sighting)', async () => {
    // No scheduler picks it up, so no other hand (scheduler, kwok) changes it between the two
    // adoptions: its resourceVersion moves only if the second one writes.
    const unscheduled = pod('twice', { app: 'web' });
    unscheduled.spec = { ...unscheduled.spec!, schedulerName: 'no-such-scheduler' };
    const stale = await client.create<V1Pod>(CoreTypes.Pod, unscheduled);
    const first = await adoptPod(client, stale, rs);
    assert.equal(first?.written, true);
    const second = await adoptPod(client, stale, rs);
    assert.equal(second?.written, false, 'the second sighting wrote nothing');
    assert.equal(second?.pod.metadata?.resourceVersion, first?.pod.metadata?.resourceVersion);
    assert.equal(second?.pod.metadata?.ownerReferences?.length, 1);
    assert.equal(second?.pod.metadata?.ownerReferences?.[0]?.uid, rs.metadata.uid);
  });

  it('does not adopt a pod that got another controller meanwhile', async () => {
    const stale = await client.create<V1Pod>(CoreTypes.Pod, pod('taken', { app: 'web' }));
    const other = await client.create<V1ConfigMap>(CoreTypes.ConfigMap, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'owner', namespace: ns },
    });
    await client.patch(CoreTypes.Pod, {
      namespace: ns,
      name: 'taken',
      patchType: 'merge',
      body: {
        metadata: {
          ownerReferences: [
            {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              name: 'owner',
              uid: other.metadata?.uid,
              controller: true,
            },
          ],
        },
      },
    });
    assert.equal(await adoptPod(client, stale, rs), undefined);
    const now = await client.get<V1Pod>(CoreTypes.Pod, ns, 'taken');
    assert.equal(now.metadata?.ownerReferences?.length, 1);
    assert.equal(now.metadata?.ownerReferences?.[0]?.kind, 'ConfigMap');
    assert.equal(now.metadata?.labels?.[REPLICA_SET_POD_LABEL], undefined);
  });

  it('does not adopt a pod whose labels stopped matching meanwhile', async () => {
    const stale = await client.create<V1Pod>(CoreTypes.Pod, pod('moved', { app: 'web' }));
    await client.patch(CoreTypes.Pod, {
      namespace: ns,
      name: 'moved',
      patchType: 'merge',
      body: { metadata: { labels: { app: 'elsewhere' } } },
    });
    assert.equal(await adoptPod(client, stale, rs), undefined);
    const now = await client.get<V1Pod>(CoreTypes.Pod, ns, 'moved');
    assert.equal(now.metadata?.ownerReferences, undefined);
  });

  it('marks a pod of the set that changed since the set read it', async () => {
    const created = await client.create<V1Pod>(CoreTypes.Pod, pod('unmarked', { app: 'web' }));
    const adopted = await adoptPod(client, created, rs);
    assert.ok(adopted);
    await client.patch(CoreTypes.Pod, {
      namespace: ns,
      name: 'unmarked',
      patchType: 'json',
      body: [{ op: 'remove', path: `/metadata/labels/${REPLICA_SET_POD_LABEL.replace('/', '~1')}` }],
    });
    const stale = await client.get<V1Pod>(CoreTypes.Pod, ns, 'unmarked');
    await touch('unmarked');
    const marked = await markPod(client, stale, rs);
    assert.equal(marked?.written, true);
    assert.equal(marked?.pod.metadata?.labels?.[REPLICA_SET_POD_LABEL], 'true');
    const again = await markPod(client, stale, rs);
    assert.equal(again?.written, false, 'marking again from the stale copy writes nothing');
    assert.equal(again?.pod.metadata?.resourceVersion, marked?.pod.metadata?.resourceVersion);
  });
});
