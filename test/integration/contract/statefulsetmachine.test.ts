// The conformance kit on StatefulSetMachine, the example provider that runs as a process of its own
// (examples/statefulset-provider), with its sample.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runContractTest } from '../../../e2e/contract/kit.ts';
import { CHECK_NAMES, formatResult } from '../../../e2e/contract/report.ts';
import { runOk } from '../../../e2e/providers/exec.ts';
import { testClient, testCluster } from '../../../e2e/support/cluster.ts';
import { installCrds } from '../../../e2e/support/crds.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { OperatorProcess } from '../../../e2e/support/operator-process.ts';
import { ensureFreeVolumes } from './provider.ts';

const EXAMPLE = new URL('../../../examples/statefulset-provider/', import.meta.url);
const path = (relative: string) => fileURLToPath(new URL(relative, EXAMPLE));

it('contract kit: StatefulSetMachine passes every check with examples/statefulset-provider/samples/statefulsetmachine.yaml', async () => {
  const { kubeconfig, kubectl } = await testCluster();
  const client = await testClient();
  // The operator's CRDs (the provider watches VolumeBackups for restores) and the example's own.
  await installCrds();
  await runOk(kubectl, [
    '--kubeconfig',
    kubeconfig,
    'apply',
    '--server-side',
    '--force-conflicts',
    '-k',
    path('crd'),
  ]);
  await runOk(kubectl, [
    '--kubeconfig',
    kubeconfig,
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd/statefulsetmachines.examples.basicoperator.dev',
  ]);
  await ensureFreeVolumes(4);
  const ns = await createNamespace(client, 'contract-sts');
  const provider = new OperatorProcess({
    name: 'statefulset-provider',
    args: [
      path('src/main.ts'),
      '--kubeconfig',
      kubeconfig,
      '--namespaces',
      ns,
      '--metrics-bind-address',
      '0',
      '--health-probe-bind-address',
      '127.0.0.1:0',
      '--log-level',
      'info',
    ],
  });
  try {
    await provider.controllersStarted(90_000);
    const results = await runContractTest({
      kind: 'StatefulSetMachine.examples.basicoperator.dev',
      sample: path('samples/statefulsetmachine.yaml'),
      namespace: ns,
      timeoutSeconds: 120,
      settleSeconds: 3,
      kubeconfig,
    });
    const lines = `${results.map(formatResult).join('\n')}\n${provider.describe()}`;
    assert.deepEqual(
      results.map((r) => r.check),
      CHECK_NAMES,
      lines,
    );
    assert.deepEqual(results.filter((r) => r.status !== 'pass').map(formatResult), [], lines);
    assert.ok(provider.running, `the provider process exited during the run\n${lines}`);
  } finally {
    await provider.stop({ graceMs: 15_000 });
    await deleteNamespace(client, ns);
  }
});
