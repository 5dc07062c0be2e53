// The conformance kit against providers that each break one rule of the contract: the kit fails
// exactly the checks that rule is about, with a message that says what it saw.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CheckResult, runContractTest } from '../../../e2e/contract/kit.ts';
import { formatResult } from '../../../e2e/contract/report.ts';
import { testClient, testCluster } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import type { Manager } from '../../../src/runtime/manager/manager.ts';
import {
  deleteTestCrds,
  ensureFreeVolumes,
  installTestCrds,
  kindArgument,
  startTestProviders,
  TEST_KINDS,
  type TestKind,
} from './provider.ts';

const KINDS = [
  TEST_KINDS.neverStops,
  TEST_KINDS.deletesClaims,
  TEST_KINDS.stopsNothing,
  TEST_KINDS.undeclared,
  TEST_KINDS.mistyped,
];

/** The checks that did not pass, as `status check`, and the lines of the whole run for messages. */
function outcome(results: CheckResult[]) {
  return {
    notPassed: results.filter((r) => r.status !== 'pass').map((r) => `${r.status} ${r.check}`),
    detail: (check: string) => results.find((r) => r.check === check)?.detail ?? '',
    lines: results.map(formatResult).join('\n'),
  };
}

describe('contract kit: providers that break the contract', { concurrency: true }, () => {
  let client: KubeClient;
  let ns: string;
  let kubeconfig: string;
  let manager: Manager | undefined;

  before(async () => {
    client = await testClient();
    kubeconfig = (await testCluster()).kubeconfig;
    await installTestCrds(client, KINDS);
    await ensureFreeVolumes(8);
    ns = await createNamespace(client, 'contract-bad');
    manager = await startTestProviders(ns, KINDS);
  });

  after(async () => {
    await manager?.stop();
    await deleteNamespace(client, ns);
    await deleteTestCrds(client, KINDS);
  });

  const kit = (kind: TestKind, timeoutSeconds = 60) =>
    runContractTest({
      kind: kindArgument(kind),
      namespace: ns,
      timeoutSeconds,
      settleSeconds: 2,
      kubeconfig,
    });

  it('fails a provider that never reports stopped, after the timeout', async () => {
    const { notPassed, detail, lines } = outcome(await kit(TEST_KINDS.neverStops, 20));
    assert.deepEqual(
      notPassed,
      ['fail stops-on-request', 'skip compute-stopped', 'skip claims-kept', 'skip stays-stopped'],
      lines,
    );
    assert.match(
      detail('stops-on-request'),
      /^status\.stopped did not become true within 20\.0 s \(--timeout\) of the stop request; last seen: Ready=True/,
    );
  });

  it('fails a provider that deletes a claim when it stops', async () => {
    const { notPassed, detail, lines } = outcome(await kit(TEST_KINDS.deletesClaims));
    assert.deepEqual(notPassed, ['fail claims-kept', 'fail stays-stopped'], lines);
    assert.match(
      detail('claims-kept'),
      /^when stopped was reported: claim contract-test-\w+-data is (gone|being deleted)/,
    );
    assert.match(detail('stays-stopped'), /claim contract-test-\w+-data is (gone|being deleted)/);
  });

  it('fails a provider that reports stopped while its pod still runs', async () => {
    const { notPassed, detail, lines } = outcome(await kit(TEST_KINDS.stopsNothing));
    assert.deepEqual(notPassed, ['fail compute-stopped', 'fail stays-stopped'], lines);
    assert.match(
      detail('compute-stopped'),
      /^stopped was reported while pod contract-test-(\w+) \(Running\) mounts contract-test-\1-data$/,
    );
    assert.match(detail('stays-stopped'), /compute started again: pod contract-test-\w+ \(Running\) mounts/);
  });

  it('fails a provider whose CRD does not declare the contract, and still tests the rest', async () => {
    const { notPassed, detail, lines } = outcome(await kit(TEST_KINDS.undeclared));
    assert.deepEqual(notPassed, ['fail crd-contract-label'], lines);
    assert.equal(
      detail('crd-contract-label'),
      'CRD undeclaredmachines.contract-kit.test.basicoperator.dev has no label machine-contract.infra.basicoperator.dev/v1 ' +
        '(it must list the versions that implement contract v1, e.g. machine-contract.infra.basicoperator.dev/v1: v1alpha1); ' +
        'a Machine referring to this kind gets ContractNotDeclared',
    );
  });

  it('fails a provider that reports a field with the wrong type', async () => {
    const { notPassed, detail, lines } = outcome(await kit(TEST_KINDS.mistyped));
    assert.deepEqual(
      notPassed,
      [
        'fail becomes-ready',
        'skip ready-condition-current',
        'fail status-well-typed',
        'skip volume-claims-exist',
        'skip owner-tolerated',
        'fail stops-on-request',
        'skip compute-stopped',
        'skip claims-kept',
        'skip stays-stopped',
      ],
      lines,
    );
    assert.equal(
      detail('becomes-ready'),
      'cannot read readiness, the status breaks the contract: status.ready must be a boolean',
    );
    assert.equal(
      detail('status-well-typed'),
      'the status breaks the contract: status.ready must be a boolean',
    );
    assert.equal(
      detail('stops-on-request'),
      'cannot read status.stopped, the status breaks the contract: status.ready must be a boolean',
    );
  });
});
