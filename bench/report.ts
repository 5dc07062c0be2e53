import { availableParallelism } from 'node:os';
import { describeIdle } from './measure/idle.ts';
import type { RawLimit } from './sides/raw.ts';
import type { ObservedSide, SideResult } from './sides/side.ts';

/** What the bench compares the sides under: the workload and each side's client budget. */
export interface ReportSettings {
  readonly deployments: number;
  readonly replicas: number;
  /** kube-controller-manager's budget per controller, and the operator's shared one. */
  readonly kcm: { qps: number; burst: number };
  readonly operator: { qps: number; burst: number };
  /** Print the pods created, bound and Ready in each second. */
  readonly timeline: boolean;
}

/** The figures the bench prints on stdout: a table of both sides, the ratios, then every other figure. */
export function report(
  {
    kcm,
    op,
    raw,
    rawLimit,
  }: {
    kcm?: ObservedSide | undefined;
    op?: ObservedSide | undefined;
    raw?: RawLimit | undefined;
    rawLimit?: number | undefined;
  },
  settings: ReportSettings,
): string[] {
  const { deployments: N, replicas: R, timeline } = settings;
  const { qps: QPS, burst: BURST } = settings.kcm;
  const { qps: OP_QPS, burst: OP_BURST } = settings.operator;
  const f = (n: number | undefined, d = 1) => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(d));
  const mib = (bytes: number | undefined) => (bytes === undefined ? undefined : bytes / 1048576);
  /** a / b with a note in parentheses, or '-' when either is missing. */
  const ratio = (a: number | undefined, b: number | undefined, note: string) =>
    a !== undefined && b !== undefined ? `${f(a / b, 2)} (${note})` : '-';
  const [opControllers, kcmControllers] = [op?.latency?.controllers?.p99Ms, kcm?.latency?.controllers?.p99Ms];
  const startupText = (s: SideResult['startup']) =>
    !s
      ? '-'
      : 'firstReconcileMs' in s
        ? `caches synced ${f(s.cachesSyncedMs / 1000, 2)} s, first reconcile done ${f(s.firstReconcileMs / 1000, 2)} s after process start`
        : `lease ${f(s.leaseMs / 1000, 2)} s after process start (a killed predecessor's lease expires first), caches synced ${f(s.cachesSyncedAfterLeaseMs / 1000, 2)} s after the lease`;
  const row = (side: string, r: SideResult) =>
    `| ${N}x${R} | ${side} | ${f(r.seconds)} | ${f(r.podsPerSecond)} | ${f(r.peakRssMiB)} | ${f(mib(r.heap?.usedBytes))} | ${f(r.cpuSeconds)} | ${f(r.latency?.p50Ms, 0)} / ${f(r.latency?.p99Ms, 0)} |`;
  return [
    `| workload | side | time to all ready (s) | pods created/s | peak RSS (MiB) | live heap after GC (MiB) | CPU to ready (s) | reaction p50 / p99 (ms) |`,
    `|---|---|---|---|---|---|---|---|`,
    ...(kcm ? [row('kube-controller-manager (whole process)', kcm)] : []),
    ...(op ? [row('basic-operator', op)] : []),
    '',
    ...(kcm && op
      ? [
          `time ratio operator/KCM: ${ratio(op.seconds, kcm.seconds, 'goal <= 0.70')}`,
          `peak RSS ratio operator/KCM: ${ratio(op.peakRssMiB, kcm.peakRssMiB, 'goal <= 1.00')}`,
          `reaction p99 ratio operator/KCM: ${ratio(op.latency?.p99Ms, kcm.latency?.p99Ms, 'goal <= 1.00, and p99 <= 100 ms')}`,
          `reaction p99 ratio operator/KCM, the controllers' part (from the deployment seen to the pod): ${ratio(opControllers, kcmControllers, `${opControllers} / ${kcmControllers} ms`)}`,
        ]
      : []),
    ...(op?.heap
      ? [
          `operator heap after a full GC: ${f(mib(op.heap.usedBytes))} MiB live of ${f(mib(op.heap.totalBytes))} MiB held (peak RSS ${f(op.peakRssMiB)} MiB, settled RSS ${f(op.settledRssMiB)} MiB${op.memoryLimitMiB ? `, limit ${op.memoryLimitMiB} MiB` : ''})`,
        ]
      : []),
    ...(kcm?.settledRssMiB !== undefined || op?.settledRssMiB !== undefined
      ? [
          `RSS once settled (after the idle window): kube-controller-manager ${f(kcm?.settledRssMiB)} MiB, basic-operator ${f(op?.settledRssMiB)} MiB`,
        ]
      : []),
    ...(kcm?.idle ? [`idle, kube-controller-manager: ${describeIdle(kcm.idle)}`] : []),
    ...(op?.idle ? [`idle, basic-operator: ${describeIdle(op.idle)}`] : []),
    ...(kcm?.startup
      ? [`restart with the workload present, kube-controller-manager: ${startupText(kcm.startup)}`]
      : []),
    ...(op?.startup ? [`restart with the workload present, basic-operator: ${startupText(op.startup)}`] : []),
    `client budgets: kube-controller-manager ${QPS} qps/${BURST} burst for each of its deployment and replicaset controllers; operator ${OP_QPS}/${OP_BURST} shared`,
    ...(raw
      ? [
          `raw pod-create limit (plain client loop, 32 in flight, the operator's ${OP_QPS} qps budget): ${f(raw.throttled)} pods/s; unthrottled (the API server's capacity): ${f(raw.unthrottled)} pods/s` +
            (raw.unthrottledRuns.length > 1
              ? `, the median of ${raw.unthrottledRuns.length} runs (${raw.unthrottledRuns.map((r) => f(r)).join(', ')})`
              : ''),
        ]
      : []),
    // A loop held to the budget cannot really outrun the server: when it seems to (the burst lets
    // most of 1000 pods go at once), the server's capacity is the limit.
    ...(rawLimit !== undefined && op
      ? [
          `operator pods/s vs raw limit (the lower of the two, ${f(rawLimit)} pods/s): ` +
            `${f((op.podsPerSecond / rawLimit) * 100, 0)}% (goal >= 84%)`,
        ]
      : []),
    ...(kcm?.rolloutCpu
      ? [
          `CPU seconds from the first create to ready, kube-controller-manager side: ${rolloutCpuLine(kcm.rolloutCpu, kcm.seconds)}`,
        ]
      : []),
    ...(op?.rolloutCpu
      ? [
          `CPU seconds from the first create to ready, basic-operator side: ${rolloutCpuLine(op.rolloutCpu, op.seconds)}`,
        ]
      : []),
    ...(kcm ? [kcm.machine] : []),
    ...(op ? [op.machine] : []),
    ...(timeline && kcm
      ? [
          `pods created per second, kube-controller-manager: ${kcm.timeline.join(' ')}`,
          `pods bound per second, kube-controller-manager: ${kcm.boundTimeline.join(' ')}`,
          `pods ready per second, kube-controller-manager: ${kcm.readyTimeline.join(' ')}`,
        ]
      : []),
    ...(timeline && op
      ? [
          `pods created per second, basic-operator: ${op.timeline.join(' ')}`,
          `pods bound per second, basic-operator: ${op.boundTimeline.join(' ')}`,
          `pods ready per second, basic-operator: ${op.readyTimeline.join(' ')}`,
        ]
      : []),
  ];
}

/** "kube-apiserver 10.3, ..., all 20.9 of 21.8 (96%)": the CPU a rollout used against the cores' time. */
function rolloutCpuLine(cpu: Record<string, number>, seconds: number): string {
  const total = Object.values(cpu).reduce((a, b) => a + b, 0);
  const available = seconds * availableParallelism();
  return (
    `${Object.entries(cpu)
      .map(([name, s]) => `${name} ${s.toFixed(1)}`)
      .join(', ')}; ` +
    `all ${total.toFixed(1)} of the cores' ${available.toFixed(1)} (${Math.round((100 * total) / available)}% busy)`
  );
}
