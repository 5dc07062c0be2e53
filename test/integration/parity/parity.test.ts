import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIXED_KINDS, FIXED_SEEDS, FIXED_SKIP, FIXED_STEPS } from '../../parity/seeds.ts';
import { runSession, summaryLine } from '../../parity/session.ts';

/**
 * The differential test: kube-controller-manager's Deployment controller is the oracle. Each seed
 * applies one random sequence of operations to a Deployment and a BasicDeployment side by side and
 * compares their settled states, pod bounds, pod creations and reconcile rates (test/parity).
 */
describe('parity with kube-controller-manager', () => {
  it(`runs seeds ${FIXED_SEEDS.join(', ')} (${FIXED_STEPS} steps each) without a divergence`, {
    timeout: 600_000,
  }, async () => {
    const lines: string[] = [];
    const report = await runSession({
      seeds: FIXED_SEEDS,
      steps: FIXED_STEPS,
      kinds: FIXED_KINDS,
      kindsArg: '',
      skip: FIXED_SKIP,
      log: (line) => {
        lines.push(line);
        if (process.env.PARITY_VERBOSE) process.stderr.write(`${line}\n`);
      },
    });
    const summary = summaryLine(report);
    assert.equal(report.reports.length, 0, `${summary}\n\n${report.reports.join('\n\n')}`);
  });
});
