// The StatefulSetMachine CRD on the API server: applied (a structural schema), it refuses what the
// provider could not realize, with the messages its CEL rules give.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runOk } from '../../../e2e/providers/exec.ts';
import { testClient, testCluster } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { STATEFULSET_MACHINE } from '../../../examples/statefulset-provider/src/api.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { installProvider, statefulSetMachine } from './provider.ts';

describe('StatefulSetMachine CRD validation', () => {
  let client: KubeClient;
  let ns = '';

  before(async () => {
    await installProvider(0);
    client = await testClient();
    ns = await createNamespace(client, 'stsm-valid');
  });
  after(async () => {
    if (ns) await deleteNamespace(client, ns);
  });

  it('keeps the spec immutable', async () => {
    await client.create(STATEFULSET_MACHINE, statefulSetMachine(ns, 'fixed'));
    await assert.rejects(
      client.patch(STATEFULSET_MACHINE, {
        namespace: ns,
        name: 'fixed',
        patchType: 'merge',
        body: { spec: { image: 'other:2' } },
      }),
      /spec is immutable/,
    );
    // Metadata (the contract's stop request, an owner) may change.
    await client.patch(STATEFULSET_MACHINE, {
      namespace: ns,
      name: 'fixed',
      patchType: 'merge',
      body: { metadata: { annotations: { 'infra.basicoperator.dev/stop-requested': 'true' } } },
    });
  });

  it('refuses names the StatefulSet and its pod cannot carry', async () => {
    await assert.rejects(
      client.create(STATEFULSET_MACHINE, statefulSetMachine(ns, 'n'.repeat(53))),
      /metadata.name must be a DNS label of at most 52 characters/,
    );
    await assert.rejects(
      client.create(STATEFULSET_MACHINE, statefulSetMachine(ns, 'has.dots')),
      /must be a DNS label/,
    );
  });

  it("checks volumes as a PodMachine's are checked", async () => {
    await assert.rejects(
      client.create(
        STATEFULSET_MACHINE,
        statefulSetMachine(ns, 'twice', {
          volumes: [
            { name: 'a', size: '1Gi', mountPath: '/same' },
            { name: 'b', size: '1Gi', mountPath: '/same' },
          ],
        }),
      ),
      /mountPath must be unique across volumes/,
    );
    await assert.rejects(
      client.create(
        STATEFULSET_MACHINE,
        statefulSetMachine(ns, 'empty', { volumes: [{ name: 'a', size: '0', mountPath: '/a' }] }),
      ),
      /size must be greater than zero/,
    );
  });

  it('the API server accepts the whole deploy kustomization (server-side dry run)', async () => {
    const info = await testCluster();
    const out = await runOk(info.kubectl, [
      '--kubeconfig',
      info.kubeconfig,
      'apply',
      '--dry-run=server',
      '--server-side',
      '--force-conflicts',
      '-k',
      fileURLToPath(new URL('../../../examples/statefulset-provider/deploy', import.meta.url)),
    ]);
    assert.match(out, /deployment\.apps\/statefulset-provider serverside-applied \(server dry run\)/);
  });
});
