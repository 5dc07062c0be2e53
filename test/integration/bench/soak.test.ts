import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { ReferenceFigures } from '../../../bench/soak/reference.ts';
import type { SoakFigures } from '../../../bench/soak/report.ts';

/**
 * `npm run soak` at a tiny size against the local cluster (BASIC_OPERATOR_CLUSTER names another, as
 * for the soak): the three phases run, the hostile tenant in the last two and unwatched by the
 * operator in the last, and every figure comes out as a number. No timing is asserted (the soak
 * prints its ratios; docs/soak.md has a full run's); what the soak itself fails on (the operator
 * restarting, a status write looping on 422, a heap past its limit) fails this test too.
 */
const run = promisify(execFile);

const TINY = [
  ...['--replicas', '3', '--latency-changes', '3', '--latency-gap-ms', '100', '--settle-seconds', '1'],
  ...['--warmup-seconds', '3', '--changes-in-a-row', '3', '--tenant-pause-ms', '1000'],
  '--allow-others',
];

/** Runs the soak with `args` at the tiny size; its JSON figures, and what it printed. */
async function soak<T>(args: string[]): Promise<{ figures: T; stdout: string; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'soak-'));
  try {
    const json = join(dir, 'result.json');
    const output = await run(process.execPath, ['bench/soak.ts', ...TINY, ...args, '--json', json], {
      maxBuffer: 64 * 1024 * 1024,
    }).catch((err: { stdout?: string; stderr?: string }) => {
      assert.fail(`the soak failed:\n${err.stdout ?? ''}\n${(err.stderr ?? '').slice(-5000)}`);
    });
    return { figures: JSON.parse(readFileSync(json, 'utf8')) as T, ...output };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const number = (value: unknown, what: string) =>
  assert.ok(typeof value === 'number' && Number.isFinite(value), `${what}: ${JSON.stringify(value)}`);

describe('the soak on a small workload', () => {
  it('measures a rollout alone, beside the hostile tenant, and beside it unwatched, and the operator through all three', {
    timeout: 600_000,
  }, async () => {
    const { figures, stdout } = await soak<SoakFigures>([]);
    for (const phase of ['baseline', 'hostile', 'unwatched'] as const) {
      const r = figures[phase];
      number(r.createToReadySeconds, `${phase}: create to ready`);
      number(r.changeToReadySeconds, `${phase}: template change to ready`);
      number(r.latency.p50Ms, `${phase}: reaction p50`);
      number(r.latency.p99Ms, `${phase}: reaction p99`);
      assert.equal(r.latency.changes, 3);
      number(figures.alert[phase].failuresInNamespace, `${phase}: failures in its namespace`);
      number(figures.load[phase].cpuSeconds['kube-apiserver'], `${phase}: the API server's CPU`);
      number(figures.load[phase].cpuSeconds.operator, `${phase}: the operator's CPU`);
    }
    number(figures.load.hostile.cpuSeconds.webhook, "B: the webhook's CPU");
    // C's premise: the tenant kept changing its objects, and the operator made none of its pods.
    assert.ok(figures.tenantWork.unwatched.templateChanges > 0, 'the tenant at work during C');
    assert.equal(figures.tenantWork.unwatched.webhookCalls, 0, 'no pod of the tenant created during C');
    assert.equal(figures.operator.restarts, 0);
    number(figures.operator.peakRssMiB, 'operator peak RSS');
    number(figures.operator.peakHeapUsedMiB, 'operator peak heap used');
    number(figures.operator.memoryLimitMiB, "the chart's memory limit");
    assert.ok(figures.statusWrites.audited, 'the local cluster keeps an audit log');
    number(figures.statusWrites.refused422, 'status writes answered 422');
    assert.ok(figures.statusWrites.writes > 0, 'the operator wrote statuses');
    assert.ok(figures.tenant.rounds >= 1, 'the tenant changed its objects');
    assert.ok(figures.tenant.webhookCalls > 0, "the webhook refused the tenant's pods");
    number(figures.tenant.refusalSeenCharacters, "the webhook's refusal, as a client saw it");
    assert.match(stdout, /reaction p99 +\d+ ms +\d+ ms +\d+ ms +\d+\.\d\d +\d+\.\d\d +\d+\.\d\d/);
    assert.match(stdout, /ReconcileErrors alert/);
    assert.match(stdout, /^CPU over B's rollout \(\d+ s\): .*kube-apiserver/m);
  });

  it('measures the reference, kube-controller-manager with the same tenants in apps/v1 Deployments, alone and beside the tenant', {
    timeout: 600_000,
  }, async () => {
    const { figures, stdout } = await soak<ReferenceFigures>(['--controller', 'kube-controller-manager']);
    assert.equal(figures.controller, 'kube-controller-manager');
    for (const phase of ['baseline', 'hostile'] as const) {
      number(figures[phase].createToReadySeconds, `${phase}: create to ready`);
      number(figures[phase].latency.p99Ms, `${phase}: reaction p99`);
      number(
        figures.load[phase].cpuSeconds['kube-controller-manager'],
        `${phase}: kube-controller-manager's CPU`,
      );
    }
    assert.ok(figures.tenantWork.templateChanges > 0, 'the tenant at work during B');
    assert.ok(
      figures.tenant.webhookCalls > 0,
      "the webhook refused the tenant's pods, kube-controller-manager's creates",
    );
    assert.equal(figures.tenant.objects.big, 'created');
    assert.match(stdout, /reaction p99 +\d+ ms +\d+ ms +\d+\.\d\d/);
  });
});
