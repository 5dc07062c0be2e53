import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterInfo } from '../../../e2e/providers/provider.ts';
import { testCluster } from '../../../e2e/support/cluster.ts';
import { parseKinds } from '../../parity/generator.ts';
import type { OpKind } from '../../parity/model.ts';
import { withOwnCluster } from '../../parity/own-cluster.ts';
import {
  FIXED_KINDS,
  FIXED_KINDS_ARG,
  FIXED_SEEDS,
  FIXED_SKIP,
  FIXED_STEPS,
  RACE_SEEDS,
  RACE_STEPS,
} from '../../parity/seeds.ts';
import { PARITY_CLUSTER, runSession, summaryLine } from '../../parity/session.ts';

async function runClean(
  seeds: number[],
  steps: number,
  kinds: ReadonlySet<OpKind>,
  kindsArg: string,
  ownCluster?: ClusterInfo,
) {
  const report = await runSession({
    ...(ownCluster ? { ownCluster } : {}),
    seeds,
    steps,
    kinds,
    kindsArg,
    skip: FIXED_SKIP,
    log: (line) => {
      if (process.env.PARITY_VERBOSE) process.stderr.write(`${line}\n`);
    },
  });
  assert.equal(report.reports.length, 0, `${summaryLine(report)}\n\n${report.reports.join('\n\n')}`);
}

/**
 * The differential test: kube-controller-manager's Deployment controller is the oracle. Each seed
 * applies one random sequence of operations to a Deployment and a BasicDeployment side by side and
 * compares their settled states, pod bounds, pod creations and reconcile rates (test/parity). The
 * second case adds what people and clusters do between steps (operator kills, orphaning deletes).
 */
describe('parity with kube-controller-manager', () => {
  it(
    `runs seeds ${FIXED_SEEDS.join(', ')} (${FIXED_STEPS} steps each) without a divergence`,
    {
      timeout: 600_000,
    },
    () => runClean(FIXED_SEEDS, FIXED_STEPS, FIXED_KINDS, FIXED_KINDS_ARG),
  );

  // kube-controller-manager is killed too, so these seeds get a control plane of their own (the
  // shared one's garbage collector and namespace controller would stop for every other test), which
  // is stopped again afterwards.
  it(`runs seeds ${RACE_SEEDS.join(', ')} (${RACE_STEPS} steps each, hand-made pods, relabels, orphaning deletes, operator and kube-controller-manager kills, bursts) without a divergence`, {
    timeout: 600_000,
  }, async (t) => {
    if ((await testCluster()).provider !== 'local') return t.skip('needs a local control plane of its own');
    await withOwnCluster(PARITY_CLUSTER, (own) =>
      runClean(RACE_SEEDS, RACE_STEPS, parseKinds(undefined), '', own),
    );
  });
});
