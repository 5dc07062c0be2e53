// The conformance kit against a provider that follows the contract: every check passes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runContractTest } from '../../../e2e/contract/kit.ts';
import { CHECK_NAMES, formatResult } from '../../../e2e/contract/report.ts';
import { testClient, testCluster } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import type { Manager } from '../../../src/runtime/manager/manager.ts';
import {
  deleteTestCrds,
  ensureFreeVolumes,
  installTestCrds,
  kindArgument,
  startTestProviders,
  TEST_KINDS,
  testResource,
} from './provider.ts';

const KINDS = [TEST_KINDS.conforming];

describe('contract kit: a conforming provider', () => {
  let client: KubeClient;
  let ns: string;
  let manager: Manager | undefined;

  before(async () => {
    client = await testClient();
    await installTestCrds(client, KINDS);
    await ensureFreeVolumes(4);
    ns = await createNamespace(client, 'contract-ok');
    manager = await startTestProviders(ns, KINDS);
  });

  after(async () => {
    await manager?.stop();
    await deleteNamespace(client, ns);
    await deleteTestCrds(client, KINDS);
  });

  it('passes every check, in order, and leaves nothing behind', async () => {
    const results = await runContractTest({
      kind: kindArgument(TEST_KINDS.conforming),
      namespace: ns,
      timeoutSeconds: 60,
      settleSeconds: 2,
      kubeconfig: (await testCluster()).kubeconfig,
    });
    const lines = results.map(formatResult).join('\n');
    assert.deepEqual(
      results.map((r) => r.check),
      CHECK_NAMES,
      lines,
    );
    assert.deepEqual(results.filter((r) => r.status !== 'pass').map(formatResult), [], lines);
    const detail = (check: string) => results.find((r) => r.check === check)?.detail ?? '';
    assert.match(
      detail('crd-contract-label'),
      /machine-contract\.infra\.basicoperator\.dev\/v1=v1alpha1; testing v1alpha1/,
    );
    assert.match(
      detail('status-well-typed'),
      /providerID pod:\/\/.*; addresses InternalIP=.*; volumes data→contract-test-\w+-data/,
    );
    assert.match(detail('compute-stopped'), /no pod mounts contract-test-\w+-data/);
    // The object, its owner ConfigMap and (through owner references) the claim are gone or going.
    const left = await client.list(testResource(TEST_KINDS.conforming), { namespace: ns });
    assert.deepEqual(
      left.items.map((o) => o.metadata?.name),
      [],
    );
    const configMaps = await client.list(CoreTypes.ConfigMap, { namespace: ns });
    assert.deepEqual(
      configMaps.items.map((c) => c.metadata?.name).filter((name) => name?.startsWith('contract-test-')),
      [],
    );
  });
});
