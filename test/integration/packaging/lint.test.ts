import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CHART_DIR } from '../../unit/packaging/manifests.ts';
import { helm } from './helm.ts';

/** `helm lint --strict` fails on warnings too; the only message allowed is the INFO about an icon. */
const VALUE_SETS: ReadonlyArray<readonly string[]> = [
  [],
  ['watchNamespaces={team-a,team-b}', 'concurrency.machine=2'],
  ['serviceMonitor.enabled=true', 'podDisruptionBudget.enabled=true', 'prometheusRule.enabled=true'],
  [
    'replicaCount=1',
    'leaderElection.enabled=false',
    'rbac.aggregateToDefaultRoles=false',
    'admissionPolicy.enabled=false',
  ],
];

describe('helm lint', () => {
  for (const set of VALUE_SETS) {
    it(`is clean${set.length ? ` with ${set.join(', ')}` : ' with the default values'}`, async () => {
      const args = ['lint', '--strict', CHART_DIR, '--namespace', 'basic-operator-system'];
      for (const value of set) args.push('--set', value);
      const result = await helm(args);
      const output = `${result.stdout}${result.stderr}`;
      assert.equal(result.code, 0, output);
      assert.match(output, /1 chart\(s\) linted, 0 chart\(s\) failed/);
      const findings = output.split('\n').filter((line) => /^\[(INFO|WARNING|ERROR)\]/.test(line));
      assert.deepEqual(findings, ['[INFO] Chart.yaml: icon is recommended']);
    });
  }
});
