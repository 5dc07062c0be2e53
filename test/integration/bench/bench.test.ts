import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

/**
 * `npm run bench`'s measuring code on a tiny workload against the local cluster: every figure it
 * reports comes out as a number. No timing is asserted (timings belong to the bench's own runs).
 * kube-controller-manager is not restarted here: the suites running beside this one need it; the
 * parsing of its start is unit-tested.
 */
const run = promisify(execFile);

describe('the benchmark on a small workload', () => {
  it('measures both sides: throughput, peak RSS, live heap, reaction latency, idle cost and a restart', {
    timeout: 600_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-'));
    try {
      const json = join(dir, 'result.json');
      const bench = (sides: string, more: string[]) =>
        run(
          process.execPath,
          [
            'bench/deployments.ts',
            ...['--deployments', '3', '--replicas', '2', '--sides', sides, '--no-fresh-control-plane'],
            ...['--raw-pods', '20', '--raw-repeats', '1', '--latency-changes', '4', '--idle-seconds', '2'],
            ...['--settle-seconds', '1', '--json', json, '--allow-others', ...more],
          ],
          { maxBuffer: 64 * 1024 * 1024 },
        );
      const output = await bench('raw,kcm,operator', ['--no-startup']);
      const result = JSON.parse(readFileSync(json, 'utf8')) as Record<string, Record<string, unknown>>;
      const number = (value: unknown, what: string) =>
        assert.ok(
          typeof value === 'number' && Number.isFinite(value),
          `${what}: ${JSON.stringify(value)}\n${output.stderr.slice(-3000)}`,
        );
      number(result.raw?.throttled, 'raw limit');
      for (const side of ['kcm', 'operator'] as const) {
        const r = result[side] as {
          seconds: number;
          peakRssMiB: number;
          latency: {
            p50Ms: number;
            p99Ms: number;
            changes: number;
            startedAtMs: number[];
            hops?: Record<'toDeployment' | 'deploymentToSet' | 'setToPod', { p50Ms: number; p99Ms: number }>;
            controllers?: { p50Ms: number; p99Ms: number };
          };
          idle: { cpuSeconds: number; reconcilesPerSecond: Record<string, number> };
          rolloutCpu: Record<string, number>;
          readyTimeline: number[];
        };
        number(r.seconds, `${side} time to ready`);
        number(r.rolloutCpu['kube-apiserver'], `${side} API server CPU during the rollout`);
        number(r.rolloutCpu.bench, `${side} bench CPU during the rollout`);
        // The pod watch may see the last Ready just after the deployments' watch saw them ready.
        const seenReady = r.readyTimeline.reduce((a, b) => a + b, 0);
        assert.ok(seenReady >= 1 && seenReady <= 6, `${side}: pods seen Ready once each, ${seenReady}`);
        number(r.peakRssMiB, `${side} peak RSS`);
        number(r.latency.p99Ms, `${side} reaction p99`);
        assert.equal(r.latency.changes, 4);
        assert.equal(r.latency.startedAtMs.length, 4, `${side}: when each change was sent`);
        number(r.latency.hops?.toDeployment.p50Ms, `${side} reaction: to the deployment seen`);
        number(
          r.latency.hops?.deploymentToSet.p99Ms,
          `${side} reaction: from the deployment to the set scaled`,
        );
        number(r.latency.hops?.setToPod.p50Ms, `${side} reaction: from the set to the pod`);
        number(r.latency.controllers?.p99Ms, `${side} reaction: the controllers' part`);
        number(r.idle.cpuSeconds, `${side} idle CPU`);
        assert.equal(
          Object.keys(r.idle.reconcilesPerSecond).length,
          2,
          `${side}: two controllers' reconciles`,
        );
      }
      const op = result.operator as {
        heap: { usedBytes: number; totalBytes: number };
        memoryLimitMiB?: number;
      };
      number(op.heap.usedBytes, 'operator live heap');
      number((result.operator as { rolloutCpu: Record<string, number> }).rolloutCpu.operator, 'operator CPU');
      assert.ok(op.heap.usedBytes <= op.heap.totalBytes);
      assert.match(output.stdout, /peak RSS ratio operator\/KCM: \d+\.\d\d/);
      assert.match(output.stdout, /reaction p99 ratio operator\/KCM: \d+\.\d\d/);
      assert.match(output.stdout, /first create to ready, basic-operator side: .*\(\d+% busy\)/);

      await bench('operator', ['--latency-changes', '0', '--idle-seconds', '0']);
      const restarted = JSON.parse(readFileSync(json, 'utf8')) as {
        operator: { startup: { cachesSyncedMs: number; firstReconcileMs: number } };
      };
      number(restarted.operator.startup.cachesSyncedMs, 'operator restart: caches synced');
      number(restarted.operator.startup.firstReconcileMs, 'operator restart: first reconcile');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
