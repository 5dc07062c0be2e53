import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { dump } from 'js-yaml';
import { run } from '../../../e2e/providers/exec.ts';
import { ensureGoTool } from '../../../e2e/providers/local/go-tools.ts';
import { REPO_ROOT } from '../../unit/packaging/manifests.ts';
import { renderChart } from './helm.ts';

const RULE_TESTS = join(REPO_ROOT, 'test', 'fixtures', 'alerts', 'rules.test.yaml');
const ALERTS = [
  'BasicOperatorReconcileErrors',
  'BasicOperatorWorkQueueBacklog',
  'BasicOperatorReconcileStuck',
  'BasicOperatorNoLeader',
  'BasicOperatorVolumeBackupFailed',
  'BasicOperatorVolumeBackupStuck',
  'BasicDeploymentProgressDeadlineExceeded',
];

interface AlertingRule {
  alert: string;
  expr: string;
  annotations: Record<string, string>;
}
interface RuleSpec {
  groups: Array<{ name: string; rules: AlertingRule[] }>;
}

/** The chart's PrometheusRule as a plain Prometheus rules file (what the Prometheus Operator hands Prometheus). */
async function renderRules(set: readonly string[] = []): Promise<RuleSpec> {
  const manifests = await renderChart({ set: ['prometheusRule.enabled=true', ...set] });
  const rules = manifests.filter((m) => m.kind === 'PrometheusRule');
  assert.equal(rules.length, 1);
  return rules[0]?.spec as RuleSpec;
}

describe('the chart PrometheusRule, checked and unit-tested by promtool', () => {
  let promtool = '';
  let dir = '';

  before(
    async () => {
      promtool = await ensureGoTool('promtool');
      dir = mkdtempSync(join(tmpdir(), 'basic-operator-rules-'));
    },
    { timeout: 30 * 60_000 },
  );
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function promtoolOk(args: string[]): Promise<string> {
    const result = await run(promtool, args, { cwd: dir, timeoutMs: 120_000 });
    assert.equal(result.code, 0, `promtool ${args.join(' ')}:\n${result.stdout}${result.stderr}`);
    return result.stdout;
  }

  it('is off by default', async () => {
    const manifests = await renderChart();
    assert.equal(manifests.filter((m) => m.kind === 'PrometheusRule').length, 0);
  });

  it('passes promtool check rules and its unit tests: each alert fires on its symptom and not on the healthy shape', async () => {
    const spec = await renderRules();
    const rules = spec.groups.flatMap((g) => g.rules);
    assert.deepEqual(
      rules.map((r) => r.alert),
      ALERTS,
    );
    for (const rule of rules) {
      assert.equal(
        rule.annotations.runbook_url,
        `https://github.com/basicoperator/basic-operator/blob/main/docs/runbooks/${rule.alert}.md`,
      );
      assert.ok(rule.annotations.summary && rule.annotations.description, `${rule.alert} explains itself`);
    }
    writeFileSync(join(dir, 'rules.yaml'), dump(spec));
    copyFileSync(RULE_TESTS, join(dir, 'rules.test.yaml'));
    assert.match(await promtoolOk(['check', 'rules', 'rules.yaml']), /SUCCESS: 7 rules found/);
    assert.match(await promtoolOk(['test', 'rules', 'rules.test.yaml']), /SUCCESS/);
  });

  it('follows the values: selector, thresholds, and leader election turned off', async () => {
    const spec = await renderRules([
      'prometheusRule.selector=job="ops"',
      'prometheusRule.reconcileStuckAfter=30m',
      'prometheusRule.volumeBackupStuckAfter=3h',
      'leaderElection.enabled=false',
      'replicaCount=1',
    ]);
    const expr = (alert: string) => spec.groups[0]?.rules.find((r) => r.alert === alert)?.expr ?? '';
    assert.match(expr('BasicOperatorReconcileStuck'), /\{job="ops"\}\) > 1800\n$/);
    assert.match(expr('BasicOperatorVolumeBackupStuck'), /\{job="ops"\}\) > 10800\n$/);
    assert.match(expr('BasicOperatorNoLeader'), /^\(sum\(up\{job="ops"\}\) or vector\(0\)\) < 1\n$/);
    writeFileSync(join(dir, 'variant.yaml'), dump(spec));
    assert.match(await promtoolOk(['check', 'rules', 'variant.yaml']), /SUCCESS: 7 rules found/);
  });
});
