import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evaluateReconcileErrors, increase } from '../../../bench/soak/alert.ts';
import { chartDefaults, reconcileErrorsRule } from '../../../bench/soak/chart.ts';
import type { FailureLine, MetricsSample } from '../../../bench/soak/operator.ts';
import { failures, type SoakFigures } from '../../../bench/soak/report.ts';

/** basicreplicaset's counters in each namespace: [reconciles, errors]. */
const sample = (at: number, counts: Record<string, [number, number]>): MetricsSample => ({
  at: at * 1000,
  reconciles: { basicreplicaset: Object.fromEntries(Object.entries(counts).map(([ns, [r]]) => [ns, r])) },
  errors: { basicreplicaset: Object.fromEntries(Object.entries(counts).map(([ns, [, e]]) => [ns, e])) },
  depth: {},
  heapUsedBytes: 0,
  heapTotalBytes: 0,
  rssBytes: 0,
});

describe('the soak', () => {
  it("reads the chart's defaults: client budget, workers, memory limit, the ReconcileErrors alert", () => {
    const chart = chartDefaults();
    assert.ok(chart.qps > 0 && chart.burst >= chart.qps && chart.workers > 0);
    assert.ok(chart.memoryLimitBytes >= 64 * 1048576);
    assert.deepEqual(chart.reconcileErrors, { windowSeconds: 300, forSeconds: 900, ratio: 0.1 });
  });

  it('refuses a ReconcileErrors rule not grouped by controller and namespace, which it would misjudge', () => {
    const byController = [
      '- alert: BasicOperatorReconcileErrors',
      '  expr: |',
      '    sum by (controller) (rate(basic_operator_reconciles_total{result="error"}[5m]))',
      '      / sum by (controller) (rate(basic_operator_reconciles_total[5m])) > 0.1',
      '  for: 15m',
    ].join('\n');
    assert.throws(() => reconcileErrorsRule(byController, 0.1), /by \(controller, object_namespace\)/);
    const byNamespace = byController.replaceAll('by (controller)', 'by (controller, object_namespace)');
    assert.deepEqual(reconcileErrorsRule(byNamespace, 0.1), {
      windowSeconds: 300,
      forSeconds: 900,
      ratio: 0.1,
    });
  });

  it("counts a counter's increase as Prometheus does: a drop is a restart, counted from zero", () => {
    assert.equal(increase([]), 0);
    assert.equal(increase([5, 7, 10]), 5);
    assert.equal(increase([5, 7, 2, 4]), 2 + 2 + 2);
  });

  it("evaluates the alert's expression per namespace over the window before each reading of the phase", () => {
    const rule = { windowSeconds: 60, forSeconds: 120, ratio: 0.1 };
    // In hostile: 1 error in 10 reconciles a second (0.1: not above) until 100 s, then 5 in 10 until
    // 400 s. In normal, the same controller: 10 reconciles a second, none failing.
    const samples: MetricsSample[] = [];
    let [reconciles, errors, normal] = [0, 0, 0];
    for (let t = 0; t <= 400; t += 10) {
      samples.push(sample(t, { hostile: [reconciles, errors], normal: [normal, 0] }));
      reconciles += 100;
      errors += t < 100 ? 10 : 50;
      normal += 100;
    }
    const failure = (at: number, namespace: string): FailureLine => ({
      at: at * 1000,
      controller: 'basicreplicaset',
      namespace,
      name: 'x',
      message: 'reconcile failed',
      error: '',
    });
    const lines = [failure(50, 'hostile'), failure(150, 'normal'), failure(350, 'normal')];
    const quiet = evaluateReconcileErrors(rule, samples, lines, {
      namespace: 'normal',
      from: 0,
      to: 100_000,
    });
    assert.ok(Math.abs((quiet.byNamespace.hostile?.highest.basicreplicaset ?? 0) - 0.1) < 1e-9);
    assert.deepEqual(quiet.byNamespace.hostile?.aboveSeconds, {});
    assert.equal(quiet.byNamespace.hostile?.fires, false);
    assert.equal(quiet.failuresInNamespace, 0);
    const loud = evaluateReconcileErrors(rule, samples, lines, {
      namespace: 'normal',
      from: 100_000,
      to: 400_000,
    });
    assert.equal(loud.byNamespace.hostile?.highest.basicreplicaset, 0.5);
    // Above from the reading at 110 s (its window holds 100 s to 110 s) to the last, at 400 s.
    assert.equal(loud.byNamespace.hostile?.aboveSeconds.basicreplicaset, 290);
    assert.equal(loud.byNamespace.hostile?.fires, true);
    assert.equal(loud.failuresInNamespace, 2);
    // The controller's ratio over both namespaces is above the threshold too (0.25); normal's own is 0.
    assert.deepEqual(loud.byNamespace.normal, {
      highest: { basicreplicaset: 0 },
      aboveSeconds: {},
      fires: false,
    });
  });

  it('fails on a restart, a status write refused more than a handful of times, and a heap past the limit', () => {
    const figures = {
      operator: { restarts: 0, exits: [], memoryLimitMiB: 512, peakHeapTotalMiB: 100 },
      statusWrites: { refused422ByObject: [['basicdeployments hostile/big', 5]] },
    } as unknown as SoakFigures;
    assert.deepEqual(failures(figures), []);
    figures.statusWrites.refused422ByObject.unshift(['basicreplicasets hostile/big-abc', 6]);
    figures.operator.restarts = 1;
    figures.operator.peakHeapTotalMiB = 600;
    assert.equal(failures(figures).length, 3);
  });
});
