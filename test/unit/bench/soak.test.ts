import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evaluateReconcileErrors, increase } from '../../../bench/soak/alert.ts';
import { chartDefaults, reconcileErrorsRule } from '../../../bench/soak/chart.ts';
import { KCM_KINDS, OPERATOR_KINDS, type SoakDeployment } from '../../../bench/soak/kinds.ts';
import type { FailureLine, MetricsSample } from '../../../bench/soak/operator.ts';
import { type ReferenceFigures, referenceReport } from '../../../bench/soak/reference.ts';
import { failures, report, type SoakFigures } from '../../../bench/soak/report.ts';
import type { RolloutFigures } from '../../../bench/soak/rollout.ts';
import { workBetween } from '../../../bench/soak/tenant.ts';

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

  it("reports A, B and C side by side with B/A, C/A and B/C, and the tenant's work over B and C", () => {
    const rollout = (namespace: string, p99Ms: number, toDeploymentP99Ms: number): RolloutFigures => ({
      namespace,
      replicas: 100,
      createToReadySeconds: 1,
      changeToReadySeconds: 2,
      latency: {
        changes: 100,
        p50Ms: 20,
        p99Ms,
        maxMs: p99Ms,
        samplesMs: [],
        startedAtMs: [],
        hops: {
          toDeployment: { p50Ms: 5, p99Ms: toDeploymentP99Ms },
          deploymentToSet: { p50Ms: 5, p99Ms: 10 },
          setToPod: { p50Ms: 5, p99Ms: 10 },
        },
        controllers: { p50Ms: 10, p99Ms: 20 },
      },
    });
    const quiet = { byNamespace: {}, failuresInNamespace: 0 };
    const queues = { times: {}, deepest: { basicdeployment: 1 } };
    const figures: SoakFigures = {
      baseline: rollout('normal', 50, 20),
      hostile: rollout('normal-2', 200, 80),
      unwatched: rollout('normal-3', 160, 80),
      operator: {
        restarts: 0,
        exits: [],
        peakRssMiB: 169,
        peakHeapUsedMiB: 48,
        peakHeapTotalMiB: 64,
        memoryLimitMiB: 512,
        cgroupPeakMiB: 118,
        cgroupLimitHits: 0,
        requests422: {},
      },
      statusWrites: { audited: true, writes: 835, refused422: 0, refused422ByObject: [] },
      alert: {
        rule: { windowSeconds: 300, forSeconds: 900, ratio: 0.1 },
        baseline: quiet,
        hostile: quiet,
        unwatched: quiet,
      },
      tenant: {
        rounds: 11,
        templateChanges: 231,
        objects: {},
        conditions: {},
        webhookCalls: 625,
        refusalSeenCharacters: 41_073,
        failedRequests: [],
      },
      tenantWork: {
        hostile: workBetween(
          { templateChanges: 10, webhookCalls: 100 },
          { templateChanges: 52, webhookCalls: 400 },
          15_000,
        ),
        unwatched: workBetween(
          { templateChanges: 150, webhookCalls: 500 },
          { templateChanges: 190, webhookCalls: 500 },
          14_000,
        ),
      },
      queues: { baseline: queues, hostile: queues, unwatched: queues },
      load: {
        baseline: { seconds: 10, cpuSeconds: { 'kube-apiserver': 4, operator: 1 }, requests: [] },
        hostile: {
          seconds: 20,
          cpuSeconds: { operator: 3, 'kube-apiserver': 12, webhook: 0.5 },
          requests: [
            ['POST pods refused 403', 300],
            ['PATCH basicreplicasets/status', 40],
          ],
        },
        unwatched: { seconds: 10, cpuSeconds: {}, requests: [] },
      },
    };
    const lines = report(figures);
    const line = (start: string) => lines.find((l) => l.trimStart().startsWith(start)) ?? '';
    assert.match(
      lines[0] ?? '',
      /alone \(A, namespace normal\).*\(B, namespace normal-2\).*\(C, namespace normal-3\)/,
    );
    assert.deepEqual((lines[1] ?? '').trim().split(/ +/).slice(0, 6), ['A', 'B', 'C', 'B/A', 'C/A', 'B/C']);
    assert.deepEqual(line('reaction p99').split(/ +/).slice(2), [
      '50',
      'ms',
      '200',
      'ms',
      '160',
      'ms',
      '4.00',
      '3.20',
      '1.25',
    ]);
    assert.deepEqual(line('to the deployment seen p99').split(/ +/).slice(-3), ['4.00', '4.00', '1.00']);
    assert.deepEqual(line('create to all ready').split(/ +/).slice(-3), ['1.00', '1.00', '1.00']);
    assert.equal(lines.filter((l) => l.startsWith('work queues over ')).length, 3);
    assert.match(line('C: normal-3: no reconciles'), /failed reconciles and status writes in normal-3: 0/);
    assert.match(line("over B's rollout"), /\(15 s\): 42 template changes, 300 of its pods refused/);
    assert.match(line("over C's rollout"), /\(14 s\): 40 template changes, 0 of its pods refused/);
    assert.equal(
      line("CPU over B's rollout"),
      "CPU over B's rollout (20 s): kube-apiserver 12.0 s (60%), operator 3.0 s (15%), webhook 0.5 s (3%)",
    );
    assert.equal(
      lines[lines.indexOf(line("CPU over B's rollout")) + 1]?.trim(),
      'API requests per second over it, most first: POST pods refused 403 15.0, PATCH basicreplicasets/status 2.0',
    );
    assert.match(line("CPU over C's rollout"), /\(10 s\): $/);
    assert.match(line('operator restarts'), /^operator restarts: 0; besides, the restart asked for before C/);
  });

  it('tells a rolled-out deployment of either kind: the operator by status.ready, apps/v1 by its counts', () => {
    const d = (status: object, generation = 2): SoakDeployment =>
      ({ metadata: { generation }, spec: { replicas: 3 }, status }) as SoakDeployment;
    assert.equal(OPERATOR_KINDS.readyAt(d({ ready: true, observedGeneration: 2 }), 2), true);
    assert.equal(OPERATOR_KINDS.readyAt(d({ ready: true, observedGeneration: 1 }), 2), false);
    assert.equal(OPERATOR_KINDS.readyAt(d({ ready: false, observedGeneration: 2 }), 2), false);
    const counts = { observedGeneration: 2, updatedReplicas: 3, availableReplicas: 3, replicas: 3 };
    assert.equal(KCM_KINDS.readyAt(d(counts), 2), true);
    assert.equal(KCM_KINDS.readyAt(d({ ...counts, replicas: 4 }), 2), false, 'an old pod left');
    assert.equal(KCM_KINDS.readyAt(d({ ...counts, availableReplicas: 2 }), 2), false);
    assert.equal(KCM_KINDS.readyAt(d(counts), 3), false, 'an older generation');
    assert.equal(KCM_KINDS.readyAt(undefined, 1), false);
  });

  it("reports the reference's A and B side by side with B/A, its CPU and the tenant's work", () => {
    const rollout = (namespace: string, p99Ms: number): RolloutFigures => ({
      namespace,
      replicas: 100,
      createToReadySeconds: 1,
      changeToReadySeconds: 2,
      latency: { changes: 100, p50Ms: 15, p99Ms, maxMs: p99Ms, samplesMs: [], startedAtMs: [] },
    });
    const figures: ReferenceFigures = {
      controller: 'kube-controller-manager',
      baseline: rollout('normal', 25),
      hostile: rollout('normal-2', 50),
      load: {
        baseline: {
          seconds: 40,
          cpuSeconds: { 'kube-apiserver': 8, 'kube-controller-manager': 2 },
          requests: [],
        },
        hostile: {
          seconds: 40,
          cpuSeconds: { 'kube-apiserver': 12, 'kube-controller-manager': 4, webhook: 0.4 },
          requests: [['PUT replicasets/status', 400]],
        },
      },
      tenant: {
        rounds: 12,
        templateChanges: 252,
        objects: { big: 'created' },
        conditions: {},
        webhookCalls: 371,
        refusalSeenCharacters: 41_073,
        failedRequests: [],
      },
      tenantWork: { templateChanges: 168, webhookCalls: 203, seconds: 40 },
    };
    const lines = referenceReport(figures);
    const line = (start: string) => lines.find((l) => l.trimStart().startsWith(start)) ?? '';
    assert.match(lines[0] ?? '', /^soak, reference: apps\/v1 Deployments with kube-controller-manager/);
    assert.deepEqual(line('reaction p99').split(/ +/).slice(2), ['25', 'ms', '50', 'ms', '2.00']);
    assert.deepEqual(
      line('to the deployment seen p99').split(/ +/).slice(-1),
      ['NaN'],
      'no hops: NaN, not a crash',
    );
    assert.equal(
      line("CPU over B's rollout"),
      "CPU over B's rollout (40 s): kube-apiserver 12.0 s (30%), kube-controller-manager 4.0 s (10%), webhook 0.4 s (1%)",
    );
    assert.match(line("over B's rollout"), /\(40 s\): 168 template changes, 203 of its pods refused/);
    assert.match(line('big:'), /created/);
  });
});
