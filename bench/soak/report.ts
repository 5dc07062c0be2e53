import { describeQueueTimes, type QueueTimes } from '../measure/queue-times.ts';
import type { AlertEvaluation, NamespaceEvaluation } from './alert.ts';
import type { ReconcileErrorsRule } from './chart.ts';
import type { OperatorFigures } from './operator.ts';
import type { RolloutFigures } from './rollout.ts';
import type { StatusWrites } from './status-refusals.ts';
import type { TenantFigures } from './tenant.ts';

/** Everything one soak measured. */
export interface SoakFigures {
  baseline: RolloutFigures;
  hostile: RolloutFigures;
  operator: OperatorFigures;
  statusWrites: StatusWrites;
  alert: { rule: ReconcileErrorsRule; baseline: AlertEvaluation; hostile: AlertEvaluation };
  tenant: TenantFigures;
  /** Each phase: the operator's work queues over it (items, mean time queued and worked) and their deepest. */
  queues: Record<
    'baseline' | 'hostile',
    { times: Record<string, QueueTimes>; deepest: Record<string, number> }
  >;
}

/** The normal rollout under the hostile tenant over the one without: the goal (docs/soak.md), printed, never asserted. */
export const RATIO_GOAL = 1.2;
/** More 422s than this on one object's status is a write refused on every retry. */
export const MAX_422_PER_OBJECT = 5;

/** Why the soak fails: the operator restarted, a status write looped on 422, the heap passed the limit. */
export function failures(figures: SoakFigures): string[] {
  const { operator, statusWrites } = figures;
  const found: string[] = [];
  if (operator.restarts > 0)
    found.push(`the operator restarted ${operator.restarts} time(s): ${operator.exits.join('; ')}`);
  const looped = statusWrites.refused422ByObject.filter(([, n]) => n > MAX_422_PER_OBJECT);
  if (looped.length > 0) {
    found.push(`status writes looped on 422: ${looped.map(([key, n]) => `${key} ${n}`).join(', ')}`);
  }
  const limit = operator.memoryLimitMiB;
  if (limit !== undefined && operator.peakHeapTotalMiB > limit) {
    found.push(`the operator's heap reached ${mib(operator.peakHeapTotalMiB)}, past its ${mib(limit)} limit`);
  }
  return found;
}

/** The figures, A and B side by side with their ratio, then the operator's and the tenant's. */
export function report(figures: SoakFigures): string[] {
  const { baseline: a, hostile: b, operator, statusWrites, alert, tenant } = figures;
  const row = (what: string, x: number, y: number, unit: string, digits = 0) =>
    `${what.padEnd(34)} ${`${x.toFixed(digits)} ${unit}`.padStart(12)} ${`${y.toFixed(digits)} ${unit}`.padStart(12)} ${(y / x).toFixed(2).padStart(8)}`;
  const limit =
    operator.memoryLimitMiB === undefined ? 'no limit' : `the chart's limit ${mib(operator.memoryLimitMiB)}`;
  const describe = (namespace: string, e: NamespaceEvaluation | undefined) =>
    `${namespace || '(cluster-scoped)'}: ` +
    (e === undefined
      ? 'no reconciles'
      : `highest ${describeRatios(e.highest)}; above ${alert.rule.ratio} for ${describeAbove(e.aboveSeconds)}; ${e.fires ? 'FIRES' : 'quiet'}`);
  // The phase's own namespace first (the normal tenant's), then every other one reconciled in it.
  const alertLines = (phase: string, namespace: string, e: AlertEvaluation) => [
    `  ${phase}: ${describe(namespace, e.byNamespace[namespace])}; failed reconciles and status writes in ${namespace}: ${e.failuresInNamespace}`,
    ...Object.keys(e.byNamespace)
      .filter((other) => other !== namespace)
      .sort()
      .map((other) => `     ${describe(other, e.byNamespace[other])}`),
  ];
  const worst = statusWrites.refused422ByObject[0];
  return [
    `soak: a normal rollout of ${a.replicas} replicas, alone (A, namespace ${a.namespace}) and beside a hostile tenant (B, namespace ${b.namespace})`,
    `${''.padEnd(34)} ${'A'.padStart(12)} ${'B'.padStart(12)} ${'B/A'.padStart(8)}   (goal: B/A <= ${RATIO_GOAL})`,
    row('create to all ready', a.createToReadySeconds, b.createToReadySeconds, 's', 1),
    row('template change to all ready', a.changeToReadySeconds, b.changeToReadySeconds, 's', 1),
    row(`reaction p50 (${a.latency.changes} scale-ups)`, a.latency.p50Ms, b.latency.p50Ms, 'ms'),
    row('reaction p99', a.latency.p99Ms, b.latency.p99Ms, 'ms'),
    ...(a.latency.hops && b.latency.hops && a.latency.controllers && b.latency.controllers
      ? [
          row(
            '  to the deployment seen p99',
            a.latency.hops.toDeployment.p99Ms,
            b.latency.hops.toDeployment.p99Ms,
            'ms',
          ),
          row("  the controllers' part p50", a.latency.controllers.p50Ms, b.latency.controllers.p50Ms, 'ms'),
          row("  the controllers' part p99", a.latency.controllers.p99Ms, b.latency.controllers.p99Ms, 'ms'),
        ]
      : []),
    ...(['baseline', 'hostile'] as const).map(
      (phase) =>
        `work queues over ${phase === 'baseline' ? 'A' : 'B'}: ${describeQueueTimes(figures.queues[phase].times)}; deepest ${describeCounts(figures.queues[phase].deepest)}`,
    ),
    `operator restarts: ${operator.restarts}${operator.exits.length > 0 ? ` (${operator.exits.join('; ')})` : ''}`,
    `operator memory against ${limit}: peak RSS ${mib(operator.peakRssMiB)}, heap used at most ${mib(operator.peakHeapUsedMiB)} of ${mib(operator.peakHeapTotalMiB)} held` +
      (operator.cgroupPeakMiB === undefined
        ? ''
        : `; its cgroup's peak ${mib(operator.cgroupPeakMiB)}, limit reached ${operator.cgroupLimitHits} time(s)`),
    statusWrites.audited
      ? `status writes by the operator (audit log): ${statusWrites.writes}, answered 422: ${statusWrites.refused422}` +
        (worst ? ` (most on one object: ${worst[0]} ${worst[1]})` : '')
      : 'status writes: no audit log on this cluster',
    `operator requests answered 422 (its rest_client_requests_total): ${describeCounts(operator.requests422)}`,
    `ReconcileErrors alert (errors / reconciles per controller and namespace over ${alert.rule.windowSeconds}s > ${alert.rule.ratio}, for ${alert.rule.forSeconds}s, as the chart's alert sees it):`,
    ...alertLines('A', a.namespace, alert.baseline),
    ...alertLines('B', b.namespace, alert.hostile),
    `hostile tenant: ${tenant.rounds} rounds, ${tenant.templateChanges} template changes; webhook refusals ${tenant.webhookCalls} (${tenant.refusalSeenCharacters ?? '?'} characters as a client saw one)`,
    ...Object.entries(tenant.objects).map(([what, outcome]) => `  ${what}: ${outcome}`),
    ...Object.entries(tenant.conditions).map(
      ([name, conditions]) => `  ${name}: ${conditions.join(', ') || 'no conditions'}`,
    ),
    ...(tenant.failedRequests.length > 0
      ? [`  its requests that failed: ${tenant.failedRequests.join(' | ')}`]
      : []),
  ];
}

const mib = (n: number) => `${n.toFixed(1)} MiB`;

function describeRatios(ratios: Record<string, number>): string {
  const entries = Object.entries(ratios);
  return entries.length === 0 ? 'no reconciles' : entries.map(([c, r]) => `${c} ${r.toFixed(3)}`).join(', ');
}

function describeAbove(seconds: Record<string, number>): string {
  const entries = Object.entries(seconds);
  return entries.length === 0 ? '0 s' : entries.map(([c, s]) => `${c} ${s.toFixed(0)} s`).join(', ');
}

function describeCounts(counts: Record<string, number>): string {
  const entries = Object.entries(counts);
  return entries.length === 0 ? 'none' : entries.map(([k, n]) => `${k} ${n}`).join(', ');
}
