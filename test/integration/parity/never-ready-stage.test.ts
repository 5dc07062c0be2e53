import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { NEVER_READY_ANNOTATION } from '../../../e2e/providers/local/kwok-stages.ts';
import { testClient, testCluster } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';

const condition = (pod: V1Pod, type: string) => pod.status?.conditions?.find((c) => c.type === type)?.status;

describe('the local cluster: kwok stages', () => {
  let client: KubeClient;
  let ns: string;
  before(async () => {
    client = await testClient();
    ns = await createNamespace(client, 'kwok-stages');
  });
  after(() => deleteNamespace(client, ns));

  it(`runs a pod annotated ${NEVER_READY_ANNOTATION}=true without ever making it Ready; others become Ready`, async (t) => {
    if ((await testCluster()).provider !== 'local') return t.skip('the stage belongs to the local provider');
    const pod = (name: string, annotations?: Record<string, string>): V1Pod => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) },
      spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
    });
    await client.create(CoreTypes.Pod, pod('stuck', { [NEVER_READY_ANNOTATION]: 'true' }));
    const get = (name: string) => client.get<V1Pod>(CoreTypes.Pod, ns, name);
    const stuck = await waitFor(
      'the annotated pod to run',
      async () => {
        const p = await get('stuck');
        return p.status?.phase === 'Running' ? p : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(condition(stuck, 'Ready'), 'False');
    assert.ok(stuck.status?.podIP, 'it has a pod IP');
    // kwok matches the stages again on every event of the pod, as when a controller labels it.
    await client.patch(CoreTypes.Pod, {
      namespace: ns,
      name: 'stuck',
      patchType: 'merge',
      body: { metadata: { labels: { touched: 'true' } } },
    });
    // kwok takes pod events in order, in one worker: once it has made a pod created after the touch
    // Ready, it has matched the stages against the running, touched pod.
    await client.create(CoreTypes.Pod, pod('fine'));
    await waitFor('the plain pod to be Ready', async () => condition(await get('fine'), 'Ready') === 'True', {
      timeoutMs: 30_000,
    });
    assert.equal(condition(await get('stuck'), 'Ready'), 'False', 'still not Ready later');
  });
});
