// The conformance kit on PodMachine, the provider the operator's manager runs, started in-process
// with the sample of config/samples.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runContractTest } from '../../../e2e/contract/kit.ts';
import { CHECK_NAMES, formatResult } from '../../../e2e/contract/report.ts';
import { testCluster } from '../../../e2e/support/cluster.ts';
import { registerPodMachineController } from '../../../src/controllers/podmachine/index.ts';
import { OPERATOR_DEFAULTS } from '../../support/operator-options.ts';
import { startOperatorSuite, stopOperatorSuite } from '../../support/suite.ts';
import { prepareCluster } from '../machine/helpers.ts';

const SAMPLE = fileURLToPath(
  new URL('../../../config/samples/infra_v1alpha1_podmachine.yaml', import.meta.url),
);

it('contract kit: PodMachine passes every check with config/samples/infra_v1alpha1_podmachine.yaml', async () => {
  await prepareCluster(4);
  const suite = await startOperatorSuite('contract-pm', (m) =>
    registerPodMachineController(m, OPERATOR_DEFAULTS),
  );
  try {
    const results = await runContractTest({
      kind: 'PodMachine.infra.basicoperator.dev',
      sample: SAMPLE,
      namespace: suite.ns,
      timeoutSeconds: 90,
      settleSeconds: 3,
      kubeconfig: (await testCluster()).kubeconfig,
    });
    const lines = results.map(formatResult).join('\n');
    assert.deepEqual(
      results.map((r) => r.check),
      CHECK_NAMES,
      lines,
    );
    assert.deepEqual(results.filter((r) => r.status !== 'pass').map(formatResult), [], lines);
  } finally {
    await stopOperatorSuite(suite);
  }
});
