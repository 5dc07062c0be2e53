import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { selectProvider } from '../e2e/providers/index.ts';
import { LocalProvider } from '../e2e/providers/local/index.ts';
import { buildDist } from '../e2e/support/build-dist.ts';
import { sleep } from './async.ts';
import { MeasuredCluster } from './cluster.ts';
import { log } from './log.ts';
import { MemoryCgroup, parseMemory } from './measure/memory-cgroup.ts';
import { queueTimes } from './measure/queue-times.ts';
import { refuseOtherClusters } from './others.ts';
import { evaluateReconcileErrors } from './soak/alert.ts';
import { chartDefaults } from './soak/chart.ts';
import { OPERATOR_KINDS } from './soak/kinds.ts';
import { measureRollout } from './soak/measured.ts';
import { SoakOperator } from './soak/operator.ts';
import { type ReferenceFigures, referenceReport, referenceSoak } from './soak/reference.ts';
import { failures, report, type SoakFigures } from './soak/report.ts';
import type { RolloutSettings } from './soak/rollout.ts';
import { statusWrites } from './soak/status-refusals.ts';
import { HostileTenant, type TenantSettings } from './soak/tenant.ts';

/**
 * One tenant cannot hurt another (docs/soak.md): in one run on the local cluster, with one operator
 * for the whole run, a normal 100-replica rollout alone (A), then the same in a fresh namespace while
 * a hostile tenant works in its own (B), then again in another with the tenant still at work but the
 * operator restarted to watch the normal namespaces only (C: the tenant's own load on the API server,
 * without the operator's handling of it); printed side by side with their ratios, and the operator's
 * restarts, memory, status writes refused with 422 and the ReconcileErrors alert's expression. Exits
 * 1 if the operator restarted (C's restart is asked for, not counted), a status write looped on 422
 * or its heap passed its limit; timing is printed, never asserted.
 *
 *   npm run soak -- --replicas 100
 */
const { values } = parseArgs({
  options: {
    replicas: { type: 'string', default: '100' },
    /** Scale-ups timed in each phase, one at a time (p99 over 100 is the slowest but one). */
    'latency-changes': { type: 'string', default: '100' },
    'latency-gap-ms': { type: 'string', default: '300' },
    /** Quiet time before each phase's reaction latency. */
    'settle-seconds': { type: 'string', default: '5' },
    /** The hostile tenant's time to get going before phase B's rollout starts, and before C's after the operator's restart. */
    'warmup-seconds': { type: 'string', default: '20' },
    /** The tenant's template changes in a row on one BasicDeployment, and its pause between rounds. */
    'changes-in-a-row': { type: 'string', default: '20' },
    'tenant-pause-ms': { type: 'string', default: '5000' },
    /** The length of the webhook's refusal of the tenant's pods. */
    'refusal-characters': { type: 'string', default: String(40 * 1024) },
    'quota-pods': { type: 'string', default: '10' },
    /** Per wait for a rollout, seconds. */
    timeout: { type: 'string', default: '600' },
    /** The operator's memory limit (a cgroup, as its pod runs in): "chart" (the chart's), a quantity, or "none". */
    'operator-memory-limit': { type: 'string', default: 'chart' },
    /** Keep the soak's namespaces at the end (to look at what the operator made of the tenant's objects). */
    keep: { type: 'boolean', default: false },
    /** Node flags for the operator after the image's (as bench/deployments.ts takes them), e.g. to try V8's heap sizes. */
    'node-flags': { type: 'string', default: '' },
    /** Write V8 CPU profiles of the operator (one per process: A and B, then C) into this directory. */
    'profile-operator': { type: 'string' },
    json: { type: 'string' },
    'allow-others': { type: 'boolean', default: false },
    /**
     * Who handles the tenants: "basic-operator" (BasicDeployments, phases A, B and C), or
     * "kube-controller-manager", the reference: the same tenants in apps/v1 Deployments, phases A and B.
     */
    controller: { type: 'string', default: 'basic-operator' },
  },
});

const CONTROLLERS = ['basicdeployment', 'basicreplicaset'];
const warmupMs = Number(values['warmup-seconds']) * 1000;
const NAMESPACES = {
  lease: 'soak-system',
  baseline: 'normal',
  hostile: 'normal-2',
  unwatched: 'normal-3',
  tenant: 'hostile',
};
const provider = selectProvider();
const local = provider instanceof LocalProvider ? provider.cluster : undefined;
await refuseOtherClusters(provider, values['allow-others']);
const cluster = new MeasuredCluster(await provider.up(), local);
await cluster.kubectl(['apply', '--server-side', '--force-conflicts', '-f', 'config/crd/bases/']);
await cluster.kubectl(['wait', '--for=condition=Established', '--timeout=60s', '-f', 'config/crd/bases/']);

const rollout: RolloutSettings = {
  replicas: Number(values.replicas),
  latencyChanges: Number(values['latency-changes']),
  latencyGapMs: Number(values['latency-gap-ms']),
  settleMs: Number(values['settle-seconds']) * 1000,
  timeoutMs: Number(values.timeout) * 1000,
};
const tenantSettings: TenantSettings = {
  changesInARow: Number(values['changes-in-a-row']),
  pauseMs: Number(values['tenant-pause-ms']),
  refusalCharacters: Number(values['refusal-characters']),
  quotaPods: Number(values['quota-pods']),
};
// What earlier runs left goes first: the controllers start on empty namespaces.
for (const ns of [NAMESPACES.baseline, NAMESPACES.hostile, NAMESPACES.unwatched, NAMESPACES.tenant])
  await cluster.deleteNamespace(ns);

if (values.controller === 'kube-controller-manager') {
  let reference: ReferenceFigures;
  try {
    reference = await referenceSoak(cluster, NAMESPACES, rollout, tenantSettings, warmupMs);
  } finally {
    if (!values.keep) for (const ns of Object.values(NAMESPACES)) await cluster.deleteNamespace(ns);
  }
  process.stdout.write(`${referenceReport(reference).join('\n')}\n`);
  if (values.json) writeFileSync(values.json, `${JSON.stringify(reference, null, 2)}\n`);
  process.exit(0);
} else if (values.controller !== 'basic-operator') {
  throw new Error(`--controller: basic-operator or kube-controller-manager, not ${values.controller}`);
}
log('building dist/ (the operator runs as its image runs it)');
await buildDist();

const chart = chartDefaults();
const memoryLimit =
  values['operator-memory-limit'] === 'none'
    ? undefined
    : values['operator-memory-limit'] === 'chart'
      ? chart.memoryLimitBytes
      : parseMemory(values['operator-memory-limit']);
const cgroup =
  memoryLimit === undefined ? undefined : MemoryCgroup.create('basic-operator-soak', memoryLimit);
await cluster.freshNamespace(NAMESPACES.lease);
const since = Date.now();
const operator = new SoakOperator(
  cluster,
  {
    namespaces: [NAMESPACES.baseline, NAMESPACES.hostile, NAMESPACES.tenant],
    leaseNamespace: NAMESPACES.lease,
  },
  {
    qps: chart.qps,
    burst: chart.burst,
    workers: chart.workers,
    imageNodeFlags: true,
    nodeFlags: values['node-flags'],
    profileDir: values['profile-operator'],
    heapSnapshot: undefined,
    memoryLimit,
    cgroup,
  },
);
log(
  `operator: the chart's defaults, ${chart.qps} qps / ${chart.burst} burst, ${chart.workers} workers per controller, ` +
    `memory limit ${memoryLimit === undefined ? 'none' : `${memoryLimit / 1048576} MiB (a cgroup, as the chart's pod)`}`,
);
await operator.start();
const tenant = new HostileTenant(cluster, NAMESPACES.tenant, tenantSettings, OPERATOR_KINDS);
const processes = () => ({ operator: operator.pid, webhook: tenant.webhookPid });

/** One phase's rollout, measured, with the operator's work queues over it. */
async function measuredRollout(namespace: string) {
  const metrics = await operator.metrics();
  const measured = await measureRollout(cluster, namespace, rollout, OPERATOR_KINDS, tenant, processes);
  return { ...measured, queues: queueTimes(metrics, await operator.metrics(), CONTROLLERS) };
}
type MeasuredPhase = Awaited<ReturnType<typeof measuredRollout>>;

let figures: SoakFigures;
try {
  log(`phase A: a normal rollout alone, in ${NAMESPACES.baseline}`);
  const a = await measuredRollout(NAMESPACES.baseline);

  log(`phase B: the hostile tenant in ${NAMESPACES.tenant}`);
  await tenant.start();
  log(`  the tenant at work for ${values['warmup-seconds']}s before the rollout`);
  await sleep(warmupMs);
  log(`phase B: the same rollout in ${NAMESPACES.hostile}, beside the tenant`);
  const b = await measuredRollout(NAMESPACES.hostile);

  log(
    `phase C: the operator restarted to watch ${NAMESPACES.baseline}, ${NAMESPACES.hostile} and ${NAMESPACES.unwatched}, not ${NAMESPACES.tenant}`,
  );
  await operator.watchOnly([NAMESPACES.baseline, NAMESPACES.hostile, NAMESPACES.unwatched]);
  log(`  the tenant at work for ${values['warmup-seconds']}s, unwatched, before the rollout`);
  await sleep(warmupMs);
  log(`phase C: the same rollout in ${NAMESPACES.unwatched}, beside the tenant the operator does not watch`);
  const c = await measuredRollout(NAMESPACES.unwatched);
  const tenantFigures = await tenant.stop();
  const operatorFigures = await operator.stop();
  // The API server writes its audit log in batches: the last writes land a moment later.
  await sleep(3000);
  const alert = (namespace: string, { from, to }: MeasuredPhase) =>
    evaluateReconcileErrors(chart.reconcileErrors, operator.samples, operator.failures, {
      namespace,
      from,
      to,
    });
  const queues = ({ queues, from, to }: MeasuredPhase) => ({
    times: queues,
    deepest: operator.deepestQueues(from, to),
  });
  figures = {
    baseline: a.figures,
    hostile: b.figures,
    unwatched: c.figures,
    operator: operatorFigures,
    statusWrites: await statusWrites(local, since),
    alert: {
      rule: chart.reconcileErrors,
      baseline: alert(NAMESPACES.baseline, a),
      hostile: alert(NAMESPACES.hostile, b),
      unwatched: alert(NAMESPACES.unwatched, c),
    },
    tenant: tenantFigures,
    tenantWork: { hostile: b.tenantWork, unwatched: c.tenantWork },
    queues: { baseline: queues(a), hostile: queues(b), unwatched: queues(c) },
    load: { baseline: a.load, hostile: b.load, unwatched: c.load },
  };
} finally {
  await tenant.removeWebhook();
  await operator.stop();
  if (!values.keep) {
    for (const ns of Object.values(NAMESPACES)) await cluster.deleteNamespace(ns);
  }
  cgroup?.remove();
}

process.stdout.write(`${report(figures).join('\n')}\n`);
if (values.json) writeFileSync(values.json, `${JSON.stringify(figures, null, 2)}\n`);
const failed = failures(figures);
for (const failure of failed) log(`FAILED: ${failure}`);
process.exit(failed.length > 0 ? 1 : 0);
