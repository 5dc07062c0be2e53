import { describeQueueTimes, type QueueTimes } from '../measure/queue-times.ts';
import type { AlertEvaluation, NamespaceEvaluation } from './alert.ts';
import type { ReconcileErrorsRule } from './chart.ts';
import { describeLoad, type PhaseLoad } from './machine-load.ts';
import type { OperatorFigures } from './operator.ts';
import type { RolloutFigures } from './rollout.ts';
import type { StatusWrites } from './status-refusals.ts';
import type { TenantFigures, TenantWork } from './tenant.ts';

/** The soak's phases: the normal rollout alone (A), beside the hostile tenant (B), beside it unwatched (C). */
type Phase = 'baseline' | 'hostile' | 'unwatched';

/** Everything one soak measured. */
export interface SoakFigures {
  baseline: RolloutFigures;
  hostile: RolloutFigures;
  /** Phase C: the tenant at work as in B, in a namespace the operator no longer watches. */
  unwatched: RolloutFigures;
  operator: OperatorFigures;
  statusWrites: StatusWrites;
  alert: { rule: ReconcileErrorsRule } & Record<Phase, AlertEvaluation>;
  tenant: TenantFigures;
  /** The tenant's work over B's rollout and over C's: C holds only what the operator added to it (its creates, refused). */
  tenantWork: Record<'hostile' | 'unwatched', TenantWork & { seconds: number }>;
  /** Each phase: the operator's work queues over it (items, mean time queued and worked) and their deepest. */
  queues: Record<Phase, { times: Record<string, QueueTimes>; deepest: Record<string, number> }>;
  /** Each phase's rollout: CPU per process on the machine, and the API server's requests (all users). */
  load: Record<Phase, PhaseLoad>;
}

/** The normal rollout beside the hostile tenant over the one without (B/A): the goal (docs/soak.md), printed, never asserted. */
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

const PHASE_LETTER: Record<Phase, string> = { baseline: 'A', hostile: 'B', unwatched: 'C' };

/** The figures, A, B and C side by side with B/A, C/A and B/C, then the operator's and the tenant's. */
export function report(figures: SoakFigures): string[] {
  const { baseline: a, hostile: b, unwatched: c, operator, statusWrites, alert, tenant } = figures;
  const row = (what: string, pick: (r: RolloutFigures) => number, unit: string, digits = 0) => {
    const [x, y, z] = [pick(a), pick(b), pick(c)];
    return figureRow(what, [x, y, z], [y / x, z / x, y / z], unit, digits);
  };
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
  const workLine = (phase: 'hostile' | 'unwatched') => {
    const work = figures.tenantWork[phase];
    return `  over ${PHASE_LETTER[phase]}'s rollout (${work.seconds.toFixed(0)} s): ${work.templateChanges} template changes, ${work.webhookCalls} of its pods refused by the webhook`;
  };
  const hops = [a, b, c].every((r) => r.latency.hops && r.latency.controllers);
  const worst = statusWrites.refused422ByObject[0];
  return [
    `soak: a normal rollout of ${a.replicas} replicas, alone (A, namespace ${a.namespace}), beside a hostile tenant (B, namespace ${b.namespace}), ` +
      `and beside the same tenant with the operator not watching it (C, namespace ${c.namespace})`,
    `${''.padEnd(34)} ${['A', 'B', 'C'].map((p) => p.padStart(12)).join(' ')} ${['B/A', 'C/A', 'B/C'].map((p) => p.padStart(8)).join(' ')}` +
      `   (goal: B/A <= ${RATIO_GOAL}; B/C near 1: the tenant's own load on the API server, above 1: the operator's handling of it)`,
    row('create to all ready', (r) => r.createToReadySeconds, 's', 1),
    row('template change to all ready', (r) => r.changeToReadySeconds, 's', 1),
    row(`reaction p50 (${a.latency.changes} scale-ups)`, (r) => r.latency.p50Ms, 'ms'),
    row('reaction p99', (r) => r.latency.p99Ms, 'ms'),
    ...(hops
      ? [
          row('  to the deployment seen p99', (r) => r.latency.hops?.toDeployment.p99Ms ?? Number.NaN, 'ms'),
          row("  the controllers' part p50", (r) => r.latency.controllers?.p50Ms ?? Number.NaN, 'ms'),
          row("  the controllers' part p99", (r) => r.latency.controllers?.p99Ms ?? Number.NaN, 'ms'),
        ]
      : []),
    ...(['baseline', 'hostile', 'unwatched'] as const).map(
      (phase) =>
        `work queues over ${PHASE_LETTER[phase]}: ${describeQueueTimes(figures.queues[phase].times)}; deepest ${describeCounts(figures.queues[phase].deepest)}`,
    ),
    ...(['baseline', 'hostile', 'unwatched'] as const).flatMap((phase) =>
      describeLoad(PHASE_LETTER[phase], figures.load[phase]),
    ),
    `operator restarts: ${operator.restarts}${operator.exits.length > 0 ? ` (${operator.exits.join('; ')})` : ''}; besides, the restart asked for before C (not counted)`,
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
    ...alertLines('C', c.namespace, alert.unwatched),
    `hostile tenant: ${tenant.rounds} rounds, ${tenant.templateChanges} template changes; webhook refusals ${tenant.webhookCalls} (${tenant.refusalSeenCharacters ?? '?'} characters as a client saw one)`,
    workLine('hostile'),
    workLine('unwatched'),
    ...describeTenantObjects(tenant),
    ...(tenant.failedRequests.length > 0
      ? [`  its requests that failed: ${tenant.failedRequests.join(' | ')}`]
      : []),
  ];
}

/** One figure per phase, then their ratios, in the soak's columns. */
export function figureRow(
  what: string,
  values: number[],
  ratios: number[],
  unit: string,
  digits = 0,
): string {
  return (
    `${what.padEnd(34)} ${values.map((v) => `${v.toFixed(digits)} ${unit}`.padStart(12)).join(' ')} ` +
    ratios.map((r) => r.toFixed(2).padStart(8)).join(' ')
  );
}

/** What the API server made of each of the tenant's objects, and their conditions at the end. */
export function describeTenantObjects(tenant: TenantFigures): string[] {
  return [
    ...Object.entries(tenant.objects).map(([what, outcome]) => `  ${what}: ${outcome}`),
    ...Object.entries(tenant.conditions).map(
      ([name, conditions]) => `  ${name}: ${conditions.join(', ') || 'no conditions'}`,
    ),
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
