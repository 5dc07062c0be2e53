import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { selectProvider } from '../e2e/providers/index.ts';
import { commandLine } from '../e2e/providers/local/components.ts';
import { LocalProvider } from '../e2e/providers/local/index.ts';
import { buildDist } from '../e2e/support/build-dist.ts';
import { MeasuredCluster } from './cluster.ts';
import { log } from './log.ts';
import { chartMemoryLimit, MemoryCgroup, parseMemory } from './measure/memory-cgroup.ts';
import type { ScalableObject } from './measure/scale-ups.ts';
import { refuseOtherClusters } from './others.ts';
import { report } from './report.ts';
import { kcmSide } from './sides/kcm.ts';
import { operatorSide } from './sides/operator.ts';
import { type RawLimit, rawLimit } from './sides/raw.ts';
import { observeSide, type SideSettings } from './sides/run.ts';
import type { BenchSide, ObservedSide, SideResult } from './sides/side.ts';

/**
 * Side-by-side benchmark in one run on the local cluster: N BasicDeployments of R replicas handled
 * by the operator, and the same workload as apps/v1 Deployments handled by kube-controller-manager,
 * both with the same client QPS budget; plus the raw pod-create throughput of the API server. Once
 * a side's workload is ready it also measures, on the settled system, the reaction latency to a
 * scale, the idle cost, the live heap (operator) and a restart.
 *
 *   npm run bench -- --deployments 100 --replicas 10
 */
const { values } = parseArgs({
  options: {
    deployments: { type: 'string', default: '100' },
    replicas: { type: 'string', default: '10' },
    /** kube-controller-manager's client budget; by default read from its command line (see kcmSettings). */
    qps: { type: 'string' },
    burst: { type: 'string' },
    /**
     * kube-controller-manager gives each controller its own client and so its own limiter: the
     * deployment and replicaset controllers together may send 2 x qps. The operator shares one
     * limiter across its controllers, so it gets that same total.
     */
    'operator-qps-factor': { type: 'string', default: '2' },
    /** Pods the raw loop creates; by default the workload's N x R, so it measures sustained throughput. */
    'raw-pods': { type: 'string' },
    /**
     * Runs of the unthrottled raw loop; the median is the server's capacity. One run of a few seconds
     * on a shared 2-core machine varied from 227 to 297 pods/s within a session.
     */
    'raw-repeats': { type: 'string', default: '3' },
    timeout: { type: 'string', default: '1800' },
    /** Which sides to run, in this order: "raw,kcm,operator" (the default), another order, or a subset. */
    sides: { type: 'string', default: 'raw,kcm,operator' },
    /**
     * Local provider: stop and start the whole control plane before each side, so that no side runs
     * in the heap, caches and etcd history the sides before it left (--no-fresh-control-plane: keep it).
     */
    'fresh-control-plane': { type: 'boolean', default: true },
    /** Scale-ups timed once a side is ready (0: none). */
    'latency-changes': { type: 'string', default: '200' },
    /** Quiet time after each change's pod, before the next change. */
    'latency-gap-ms': { type: 'string', default: '300' },
    /**
     * Quiet time before the reaction latency and the idle window: the last status writes, the held
     * progress writes and the Events of the work before them.
     */
    'settle-seconds': { type: 'string', default: '10' },
    /** The window over which the settled side's idle cost is measured (0: none). */
    'idle-seconds': { type: 'string', default: '60' },
    /** Restart each side's controller process with its workload present and time its start. */
    startup: { type: 'boolean', default: true },
    /** Write every figure as JSON to this file too. */
    json: { type: 'string' },
    /** Print the pods each side created in each second, to see ramp-up and tail. */
    timeline: { type: 'boolean', default: false },
    /** Print, for each second of the operator side, its requests, queues and every process's CPU. */
    trace: { type: 'boolean', default: false },
    /** Write a V8 CPU profile of the operator process into this directory (open it in Chrome DevTools). */
    'profile-operator': { type: 'string' },
    /**
     * Run the operator inside this memory limit (a cgroup, as its pod runs): "chart" (the chart's
     * default limit), a quantity such as "1Gi", or "none".
     */
    'operator-memory-limit': { type: 'string', default: 'chart' },
    /** Start the operator with the image's Node flags (--no-image-node-flags: V8's defaults, to compare). */
    'image-node-flags': { type: 'boolean', default: true },
    /** Extra Node flags for the operator, after the image's (experiments: "--max-semi-space-size=8"). */
    'node-flags': { type: 'string', default: '' },
    /** Write a V8 heap snapshot of the operator, taken with its live heap, to this file. */
    'heap-snapshot': { type: 'string' },
    /** Measure even while the project's other clusters run beside the one measured (they skew the figures). */
    'allow-others': { type: 'boolean', default: false },
  },
  allowNegative: true,
});
const N = Number(values.deployments);
const R = Number(values.replicas);

const provider = selectProvider();
const measuredLocal = provider instanceof LocalProvider ? provider.cluster : undefined;
await refuseOtherClusters(provider, values['allow-others']);
const info = await provider.up();
const cluster = new MeasuredCluster(info, measuredLocal);

/**
 * kube-controller-manager's client budget (each of its controllers has its own) and its
 * --concurrent-deployment-syncs and --concurrent-replicaset-syncs, as the measured cluster runs it:
 * the operator gets the same, so the sides compare like with like. A flag the process was not given
 * (or a kube-controller-manager this script cannot see, as kind's) has kube-controller-manager's default.
 */
function kcmSettings(): { qps: number; burst: number; workers: number } {
  let args: string[] = [];
  const pid = cluster.pid('kube-controller-manager');
  try {
    if (pid) args = commandLine(pid);
  } catch {
    // not running: the defaults
  }
  const flag = (name: string, fallback: number) =>
    Number(args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
  return {
    qps: flag('kube-api-qps', 20),
    burst: flag('kube-api-burst', 30),
    workers: flag('concurrent-deployment-syncs', 5),
  };
}
const KCM = kcmSettings();
const QPS = Number(values.qps ?? KCM.qps);
const BURST = Number(values.burst ?? KCM.burst);
const KCM_WORKERS = KCM.workers;
const OP_QPS = QPS * Number(values['operator-qps-factor']);
const OP_BURST = BURST * Number(values['operator-qps-factor']);
const settings: SideSettings = {
  deployments: N,
  replicas: R,
  timeoutMs: Number(values.timeout) * 1000,
  trace: values.trace,
  latencyChanges: Number(values['latency-changes']),
  latencyGapMs: Number(values['latency-gap-ms']),
  settleMs: Number(values['settle-seconds']) * 1000,
  idleSeconds: Number(values['idle-seconds']),
};

await cluster.kubectl(['apply', '--server-side', '--force-conflicts', '-f', 'config/crd/bases/']);
await cluster.kubectl(['wait', '--for=condition=Established', '--timeout=60s', '-f', 'config/crd/bases/']);

const memoryLimit =
  values['operator-memory-limit'] === 'none'
    ? undefined
    : parseMemory(
        values['operator-memory-limit'] === 'chart' ? chartMemoryLimit() : values['operator-memory-limit'],
      );
const cgroup =
  memoryLimit === undefined ? undefined : MemoryCgroup.create('basic-operator-bench', memoryLimit);

const kcm = kcmSide(cluster, R);
const operator = operatorSide(cluster, R, {
  qps: OP_QPS,
  burst: OP_BURST,
  workers: KCM_WORKERS,
  imageNodeFlags: values['image-node-flags'],
  nodeFlags: values['node-flags'],
  profileDir: values['profile-operator'],
  heapSnapshot: values['heap-snapshot'],
  memoryLimit,
  cgroup,
});

/** One side, measured; then its controller restarted (--startup) or stopped, and its namespace deleted. */
async function measure<T extends ScalableObject>(side: BenchSide<T>): Promise<ObservedSide> {
  log(side.title);
  const result = await observeSide(cluster, side, settings);
  await restartIfAsked(result);
  log(`deleting the ${side.name} side`);
  await cluster.deleteNamespace(side.namespace);
  return result;
}

/** Outside observeSide: a restarted process has a new pid, and its start is not part of the side's CPU. */
async function restartIfAsked(side: SideResult): Promise<void> {
  if (values.startup && side.restart) side.startup = await side.restart();
  else await side.stop?.();
  side.restart = undefined;
  side.stop = undefined;
}

log(
  `workload: ${N} deployments x ${R} replicas; kube-controller-manager: ${QPS} qps / ${BURST} burst per controller ` +
    `(deployment + replicaset); operator: ${OP_QPS} qps / ${OP_BURST} burst shared by all its controllers; ` +
    `${KCM_WORKERS} workers per controller on both sides; operator memory limit: ${memoryLimit === undefined ? 'none' : `${memoryLimit / 1048576} MiB (a cgroup, as the chart's pod)`}`,
);
// Sides run in the order given. Without a restart between them, the control plane carries the
// previous sides' churn (its heap, caches, etcd's history), so swapping the order shows what a
// side's place costs it.
const sides = values.sides.split(',').map((side) => side.trim());
for (const side of sides) {
  if (!['raw', 'kcm', 'operator'].includes(side)) throw new Error(`--sides: unknown side "${side}"`);
}
if (sides.includes('operator')) {
  log('building dist/ (the operator runs as its image runs it)');
  await buildDist();
}
let raw: RawLimit | undefined;
let kcmResult: ObservedSide | undefined;
let opResult: ObservedSide | undefined;
const restartControlPlane = values['fresh-control-plane'] && provider instanceof LocalProvider;
if (values['fresh-control-plane'] && !restartControlPlane) {
  log(`the ${info.provider} provider cannot restart its control plane: the sides share one`);
}
for (const side of sides) {
  if (restartControlPlane) {
    const restarted = Date.now();
    await provider.restart();
    log(`control plane restarted for the ${side} side in ${((Date.now() - restarted) / 1000).toFixed(1)}s`);
  }
  if (side === 'raw') {
    log('measuring the raw pod-create limit');
    raw = await rawLimit(cluster, Number(values['raw-pods'] ?? N * R), Number(values['raw-repeats']), {
      qps: OP_QPS,
      burst: OP_BURST,
    });
  } else if (side === 'kcm') {
    kcmResult = await measure(kcm);
  } else {
    opResult = await measure(operator);
  }
}

const rawLimitPodsPerSecond = raw ? Math.min(raw.throttled, raw.unthrottled) : undefined;
const figures = report(
  { kcm: kcmResult, op: opResult, raw, rawLimit: rawLimitPodsPerSecond },
  {
    deployments: N,
    replicas: R,
    kcm: { qps: QPS, burst: BURST },
    operator: { qps: OP_QPS, burst: OP_BURST },
    timeline: values.timeline,
  },
);
process.stdout.write(`${figures.join('\n')}\n`);
if (values.json) {
  writeFileSync(
    values.json,
    `${JSON.stringify({ workload: { deployments: N, replicas: R }, raw, kcm: kcmResult, operator: opResult }, null, 2)}\n`,
  );
}
cgroup?.remove();
process.exit(0);
