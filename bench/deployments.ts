import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { KubeConfig } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { runOk } from '../e2e/providers/exec.ts';
import { selectProvider } from '../e2e/providers/index.ts';
import { KIND_CLUSTER, KindProvider } from '../e2e/providers/kind/index.ts';
import { commandLine, restartComponent, runningClusters } from '../e2e/providers/local/components.ts';
import { LocalProvider } from '../e2e/providers/local/index.ts';
import { CLUSTER_NAME, clusterDir } from '../e2e/providers/local/paths.ts';
import { imageNodeFlags } from '../e2e/support/image-node-flags.ts';
import { freePort, OperatorProcess, procStats } from '../e2e/support/operator-process.ts';
import { waitFor } from '../e2e/support/wait.ts';
import { BASIC_DEPLOYMENT, BASIC_REPLICA_SET, type BasicDeployment } from '../src/apis/index.ts';
import { Informer } from '../src/runtime/cache/informer.ts';
import { isNotFound } from '../src/runtime/client/errors.ts';
import { KubeClient } from '../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../src/runtime/client/resource.ts';
import { rootLogger } from '../src/runtime/log.ts';
import { TokenBucket } from '../src/runtime/queue/index.ts';
import { describeIdle, type IdleCost, idleCost } from './measure/idle.ts';
import { type HeapAfterGc, heapAfterGc } from './measure/inspector.ts';
import { describeHops, type ReactionLatency, reactionLatency } from './measure/latency.ts';
import { chartMemoryLimit, MemoryCgroup, parseMemory } from './measure/memory-cgroup.ts';
import { PodCreates, perSecond, rate } from './measure/pod-creates.ts';
import { labelledSamples } from './measure/prometheus-text.ts';
import { describeQueueTimes, queueTimes } from './measure/queue-times.ts';
import { type ScalableObject, ScaleUps } from './measure/scale-ups.ts';
import { describeServerTime, serverTime } from './measure/server-time.ts';
import {
  type KcmStartup,
  kcmStartup,
  type OperatorStartup,
  operatorStartup,
  processStartedAt,
} from './measure/startup.ts';
import { median } from './measure/stats.ts';
import { SideTrace } from './trace.ts';

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

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const provider = selectProvider();
const measuredLocal = provider instanceof LocalProvider ? provider.cluster : undefined;
const others = [
  ...runningClusters()
    .filter((cluster) => cluster !== measuredLocal)
    .map((cluster) => `local ${cluster}`),
  ...(provider.name !== 'kind' && (await new KindProvider().running()) ? [`kind ${KIND_CLUSTER}`] : []),
];
if (others.length > 0) {
  const running = `the project's other clusters are running beside the one measured: ${others.join(', ')}`;
  if (!values['allow-others']) {
    log(`${running}; stop them, or pass --allow-others to measure anyway`);
    process.exit(2);
  }
  log(`${running} (--allow-others: their load skews the figures)`);
}
const info = await provider.up();

/**
 * kube-controller-manager's client budget (each of its controllers has its own) and its
 * --concurrent-deployment-syncs and --concurrent-replicaset-syncs, as the measured cluster runs it:
 * the operator gets the same, so the sides compare like with like. A flag the process was not given
 * (or a kube-controller-manager this script cannot see, as kind's) has kube-controller-manager's default.
 */
function kcmSettings(): { qps: number; burst: number; workers: number } {
  let args: string[] = [];
  const pid = measuredLocal === undefined ? undefined : pidOf('kube-controller-manager');
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
const TIMEOUT_MS = Number(values.timeout) * 1000;
const OP_QPS = QPS * Number(values['operator-qps-factor']);
const OP_BURST = BURST * Number(values['operator-qps-factor']);
const LATENCY_CHANGES = Number(values['latency-changes']);
const IDLE_SECONDS = Number(values['idle-seconds']);

const kc = new KubeConfig();
kc.loadFromFile(info.kubeconfig);
const client = new KubeClient(kc, { userAgent: 'basic-operator-bench' });
const kubectl = (args: string[]) => runOk(info.kubectl, ['--kubeconfig', info.kubeconfig, ...args]);
await kubectl(['apply', '--server-side', '--force-conflicts', '-f', 'config/crd/bases/']);
await kubectl(['wait', '--for=condition=Established', '--timeout=60s', '-f', 'config/crd/bases/']);

const podTemplate = (app: string) => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
});

async function deleteNamespace(name: string): Promise<void> {
  await client.delete(CoreTypes.Namespace, undefined, name).catch(() => undefined);
  await waitFor(
    `namespace ${name} to be deleted`,
    () => client.get(CoreTypes.Namespace, undefined, name).then(() => false, isNotFound),
    { timeoutMs: 10 * 60_000, intervalMs: 1000 },
  );
}

async function freshNamespace(name: string): Promise<void> {
  await deleteNamespace(name);
  await client.create(CoreTypes.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  await waitFor(`the default ServiceAccount of namespace ${name}`, () =>
    client.get(CoreTypes.ServiceAccount, name, 'default'),
  );
}

async function parallel<T>(
  items: T[],
  concurrency: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

interface RawLimit {
  throttled: number;
  /** Median of the unthrottled runs. */
  unthrottled: number;
  unthrottledRuns: number[];
}

async function rawLimit(pods: number, repeats: number): Promise<RawLimit> {
  const ns = 'bench-raw';
  const run = async (throttle: TokenBucket | undefined) => {
    await freshNamespace(ns);
    const c = new KubeClient(kc, { throttle, userAgent: 'bench-raw' });
    const ticksBefore = controlPlaneTicks();
    const requestsBefore = await apiRequestCounts();
    const started = Date.now();
    await parallel([...Array(pods).keys()], 32, (i) =>
      c.create<V1Pod>(CoreTypes.Pod, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `raw-${i}`, namespace: ns },
        spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    const cpu = [...controlPlaneTicks()].map(
      ([c, t]) => `${c} ${((t - (ticksBefore.get(c) ?? t)) / 100).toFixed(1)}`,
    );
    const trouble = requestDelta(requestsBefore, await apiRequestCounts(), / (refused|closed) /, 1);
    log(
      `  raw loop ${throttle ? 'held to the budget' : 'unthrottled'}: ${(pods / seconds).toFixed(1)} pods/s; ` +
        `CPU seconds in ${seconds.toFixed(1)}s: ${cpu.join(', ')}` +
        (trouble.length ? `; ${trouble.map(([key, n]) => `${key} ${n}`).join(', ')}` : ''),
    );
    return pods / seconds;
  };
  const throttled = await run(new TokenBucket(OP_QPS, OP_BURST));
  const unthrottledRuns: number[] = [];
  for (let i = 0; i < Math.max(1, repeats); i++) unthrottledRuns.push(await run(undefined));
  await deleteNamespace(ns);
  return { throttled, unthrottled: median(unthrottledRuns), unthrottledRuns };
}

interface SideResult {
  seconds: number;
  podsPerSecond: number;
  /** Pods created in each second of the side. */
  timeline: number[];
  /** Pods first seen bound to a node, and Ready, in each second. */
  boundTimeline: number[];
  readyTimeline: number[];
  peakRssMiB?: number;
  cpuSeconds?: number;
  /** CPU seconds of every process on the machine from the first create to ready (local provider). */
  rolloutCpu?: Record<string, number>;
  /** RSS once the side's workload is settled, after the idle window. */
  settledRssMiB?: number;
  /** The memory limit the operator ran in (a cgroup), if any. */
  memoryLimitMiB?: number;
  /** The operator's live heap after a full GC, at the end of its side. */
  heap?: HeapAfterGc;
  latency?: ReactionLatency;
  idle?: IdleCost;
  startup?: OperatorStartup | KcmStartup;
  /** Restarts the side's controller process with the workload present and times its start. */
  restart?: () => Promise<OperatorStartup | KcmStartup>;
  /** Stops what the side left running (the operator process), when it is not restarted. */
  stop?: () => Promise<unknown>;
}

/**
 * Follows the side's deployments through an informer (our own), so knowing when all are ready costs
 * the API server one watch instead of a list of every object each second, and is exact to the event.
 * Start it before creating the objects; `all()` resolves when N are ready.
 */
function watchReadiness<T extends KubeObject>(
  type: ResourceType<T>,
  namespace: string,
  isReady: (o: T) => boolean,
) {
  const stop = new AbortController();
  const informer = new Informer<T>(client, type, { namespaces: [namespace] }, rootLogger('error'));
  const ready = new Set<string>();
  let logged = -1;
  let wake: (() => void) | undefined;
  const seen = (obj: T) => {
    const name = obj.metadata?.name ?? '';
    if (isReady(obj)) ready.add(name);
    else ready.delete(name);
    if (ready.size === N) wake?.();
  };
  informer.addHandler({
    onAdd: seen,
    onUpdate: (_, obj) => seen(obj),
    onDelete: (obj) => ready.delete(obj.metadata?.name ?? ''),
  });
  informer.start(stop.signal);
  return {
    synced: () => informer.waitForSync(),
    stop: () => stop.abort(),
    async all(): Promise<void> {
      const deadline = Date.now() + TIMEOUT_MS;
      for (;;) {
        if (ready.size !== logged) {
          logged = ready.size;
          log(`  ${logged}/${N} ready`);
        }
        if (ready.size === N) return;
        if (Date.now() > deadline) throw new Error(`timed out with ${ready.size}/${N} ready`);
        // Woken by the event that makes all N ready, or after a second to log progress.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 1000);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    },
  };
}

function pidOf(component: string): number | undefined {
  try {
    return Number(readFileSync(join(clusterDir(measuredLocal), 'pids', `${component}.pid`), 'utf8').trim());
  } catch {
    return undefined;
  }
}

/** kube-controller-manager's /metrics (its secure port lets /metrics through without authorization). */
async function kcmMetrics(): Promise<string> {
  const pid = pidOf('kube-controller-manager');
  const port =
    pid &&
    commandLine(pid)
      .find((a) => a.startsWith('--secure-port='))
      ?.split('=')[1];
  if (!port) return '';
  const response = await request(`https://127.0.0.1:${port}/metrics`, {
    dispatcher: new Agent({ connect: { rejectUnauthorized: false } }),
  });
  return response.body.text();
}

/** The settled-system measures both sides share: reaction latency, then idle cost. */
async function settledMeasures(
  scale: (name: string, replicas: number) => Promise<unknown>,
  kinds: { deployments: ResourceType<ScalableObject>; sets: ResourceType<ScalableObject>; namespace: string },
  creates: PodCreates,
  idle: Parameters<typeof idleCost>[0],
): Promise<Pick<SideResult, 'latency' | 'idle'>> {
  const result: Pick<SideResult, 'latency' | 'idle'> = {};
  if (LATENCY_CHANGES > 0) {
    // The watches listed and the metrics read before the quiet time: none of it in the first change.
    const stopWatches = new AbortController();
    const scaleUps = (type: ResourceType<ScalableObject>, appOf: (o: ScalableObject) => string | undefined) =>
      new ScaleUps(client, type, kinds.namespace, stopWatches.signal, appOf);
    const deploymentScales = scaleUps(kinds.deployments, (d) => d.metadata?.name);
    const setScales = scaleUps(kinds.sets, (s) => s.metadata?.labels?.app);
    await Promise.all([deploymentScales.listed, setScales.listed]).catch((err: unknown) => {
      stopWatches.abort();
      throw err;
    });
    const before = await idle.metrics();
    const serverBefore = serverTime(await kubectl(['get', '--raw', '/metrics']));
    // The system idle before the first change (the reads above included).
    await sleep(Number(values['settle-seconds']) * 1000);
    log(`  reaction latency: ${LATENCY_CHANGES} scale-ups, one at a time`);
    result.latency = await reactionLatency({
      deployments: N,
      replicas: R,
      changes: LATENCY_CHANGES,
      scale,
      creates,
      deploymentScales,
      setScales,
      settleMs: Number(values['latency-gap-ms']),
    }).finally(() => stopWatches.abort());
    result.latency.queues = queueTimes(before, await idle.metrics(), idle.controllers);
    const serverAfter = serverTime(await kubectl(['get', '--raw', '/metrics']));
    log(
      `  kube-apiserver's mean time per request over the changes: ${describeServerTime(serverBefore, serverAfter, /^(POST pods|PATCH|PUT (deployments|replicasets|basicreplicasets))/, LATENCY_CHANGES / 2)}`,
    );
    log(
      `  reaction: p50 ${result.latency.p50Ms} ms, p99 ${result.latency.p99Ms} ms; ${describeHops(result.latency)}; ${describeQueueTimes(result.latency.queues)}`,
    );
  }
  if (IDLE_SECONDS > 0) {
    await sleep(Number(values['settle-seconds']) * 1000);
    log(`  idle cost over ${IDLE_SECONDS}s`);
    result.idle = await idleCost(idle, IDLE_SECONDS);
  }
  return result;
}

/**
 * Sets spec.replicas of one deployment of `type` in `namespace` as `kubectl scale` does: a merge
 * patch of the scale subresource.
 */
const scaler =
  <T extends KubeObject>(type: ResourceType<T>, namespace: string) =>
  (name: string, replicas: number) =>
    client.patch(type, {
      namespace,
      name,
      patchType: 'merge',
      body: { spec: { replicas } },
      subresource: 'scale',
    });

async function kcmSide(): Promise<SideResult> {
  const ns = 'bench-kcm';
  await freshNamespace(ns);
  const pid = info.provider === 'local' ? pidOf('kube-controller-manager') : undefined;
  const before = pid ? procStats(pid) : undefined;
  const stop = new AbortController();
  const creates = new PodCreates(client, ns, stop.signal);
  const readiness = watchReadiness<V1Deployment>(
    CoreTypes.Deployment,
    ns,
    (d) =>
      d.status?.observedGeneration === d.metadata?.generation &&
      d.status?.availableReplicas === R &&
      d.status?.updatedReplicas === R &&
      d.status?.replicas === R,
  );
  await readiness.synced();
  await sleep(500);
  const started = Date.now();
  const ticksAtStart = machineTicks();
  try {
    await parallel([...Array(N).keys()], 16, (i) =>
      client.create<V1Deployment>(CoreTypes.Deployment, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: `d-${i}`, namespace: ns },
        spec: { replicas: R, selector: { matchLabels: { app: `d-${i}` } }, template: podTemplate(`d-${i}`) },
      }),
    );
    await readiness.all();
  } finally {
    readiness.stop();
  }
  const seconds = (Date.now() - started) / 1000;
  const rolloutCpu = cpuSpent(ticksAtStart, machineTicks());
  const after = pid ? procStats(pid) : undefined;
  const result: SideResult = {
    seconds,
    podsPerSecond: rate(creates.times),
    timeline: perSecond(creates.times, started),
    boundTimeline: perSecond(creates.bound, started),
    readyTimeline: perSecond(creates.ready, started),
    peakRssMiB: after ? after.rssPeakKiB / 1024 : undefined,
    cpuSeconds: before && after ? (after.cpuTicks - before.cpuTicks) / 100 : undefined,
    rolloutCpu,
  };
  try {
    if (pid) {
      Object.assign(
        result,
        await settledMeasures(
          scaler(CoreTypes.Deployment, ns),
          { deployments: CoreTypes.Deployment, sets: CoreTypes.ReplicaSet, namespace: ns },
          creates,
          {
            cpuTicks: () => procStats(pid).cpuTicks,
            metrics: kcmMetrics,
            reconcileSeries: 'workqueue_work_duration_seconds_count',
            controllers: ['deployment', 'replicaset'],
          },
        ),
      );
      result.settledRssMiB = procStats(pid).rssKiB / 1024;
    }
  } finally {
    stop.abort();
  }
  if (pid) {
    result.restart = async () => {
      log('  restarting kube-controller-manager (SIGKILL, as kwokctl would restart it)');
      const logFile = join(clusterDir(), 'logs', 'kube-controller-manager.log');
      await restartComponent(CLUSTER_NAME, 'kube-controller-manager');
      const newPid = pidOf('kube-controller-manager');
      if (!newPid) throw new Error('kube-controller-manager did not start again');
      return kcmStartup(logFile, newPid, processStartedAt(newPid));
    };
  }
  return result;
}

const CONTROL_PLANE = [
  'kube-apiserver',
  'etcd',
  'kube-scheduler',
  'kwok-controller',
  'kube-controller-manager',
];

/** CPU ticks of each control-plane process (local provider only: they run as local processes). */
function controlPlaneTicks(): Map<string, number> {
  const ticks = new Map<string, number>();
  if (info.provider !== 'local') return ticks;
  for (const component of CONTROL_PLANE) {
    try {
      const pid = Number(readFileSync(join(clusterDir(), 'pids', `${component}.pid`), 'utf8').trim());
      ticks.set(component, procStats(pid).cpuTicks);
    } catch {
      // a component that is not running has no figure
    }
  }
  return ticks;
}

/** CPU ticks of the processes sharing the machine's cores during a side: control plane, controller, bench. */
function machineTicks(controller?: readonly [string, number]): Map<string, number> {
  const ticks = controlPlaneTicks();
  if (ticks.size === 0) return ticks;
  if (controller) ticks.set(controller[0], controller[1]);
  const bench = process.cpuUsage();
  ticks.set('bench', (bench.user + bench.system) / 1e4);
  return ticks;
}

function cpuSpent(
  before: Map<string, number>,
  after: Map<string, number>,
): Record<string, number> | undefined {
  if (after.size === 0) return undefined;
  return Object.fromEntries([...after].map(([name, t]) => [name, (t - (before.get(name) ?? t)) / 100]));
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

/**
 * apiserver_request_total summed by "VERB resource[/subresource]", refused requests apart
 * ("... refused 422"); and watchers the API server closed because they did not keep up
 * (apiserver_terminated_watchers_total, as "slow watchers closed resource").
 */
async function apiRequestCounts(): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const add = (key: string, value: number) => counts.set(key, (counts.get(key) ?? 0) + value);
  const text = await kubectl(['get', '--raw', '/metrics']);
  for (const { metric, labels, value } of labelledSamples(text, [
    'apiserver_request_total',
    'apiserver_terminated_watchers_total',
  ])) {
    const resource = `${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`;
    if (metric === 'apiserver_terminated_watchers_total') add(`slow watchers closed ${resource}`, value);
    else if (Number(labels.code) >= 400) add(`${labels.verb} ${resource} refused ${labels.code}`, value);
    else add(`${labels.verb} ${resource}`, value);
  }
  return counts;
}

/** The counts matching `keys` that grew by at least `min` between two readings. */
function requestDelta(
  before: Map<string, number>,
  after: Map<string, number>,
  keys: RegExp,
  min: number,
): Array<readonly [string, number]> {
  return [...after]
    .map(([key, n]) => [key, n - (before.get(key) ?? 0)] as const)
    .filter(([key, n]) => n >= min && keys.test(key));
}

/** What the cluster did during one side: CPU per process and the API requests that wrote. */
async function observeSide<T extends SideResult>(
  name: string,
  side: () => Promise<T>,
): Promise<T & { machine: string }> {
  const ticksBefore = controlPlaneTicks();
  const requestsBefore = await apiRequestCounts();
  const benchBefore = process.cpuUsage();
  const result = await side();
  const bench = process.cpuUsage(benchBefore);
  const ticksAfter = controlPlaneTicks();
  const requestsAfter = await apiRequestCounts();
  const cpu = [...ticksAfter].map(([c, t]) => [c, (t - (ticksBefore.get(c) ?? t)) / 100] as const);
  if (result.cpuSeconds !== undefined && name === 'basic-operator') cpu.push(['operator', result.cpuSeconds]);
  // The bench's own watches (pod creations, readiness) run on the same cores during a side.
  cpu.push(['bench', (bench.user + bench.system) / 1e6]);
  const writes = [
    ...requestDelta(requestsBefore, requestsAfter, /^(POST|PUT|PATCH|DELETE) \S+$/, 50),
    ...requestDelta(requestsBefore, requestsAfter, / (refused|closed) /, 1),
  ].sort((a, b) => b[1] - a[1]);
  const machine =
    cpu.length === 0
      ? ''
      : `CPU seconds during ${name} (${result.seconds.toFixed(1)}s to ready, then the settled measures, on ${availableParallelism()} cores): ` +
        `${cpu.map(([c, seconds]) => `${c} ${seconds.toFixed(1)}`).join(', ')}\n` +
        `API writes during ${name}: ${writes.map(([key, n]) => `${key} ${n}`).join(', ')}`;
  return { ...result, machine };
}

const memoryLimit =
  values['operator-memory-limit'] === 'none'
    ? undefined
    : parseMemory(
        values['operator-memory-limit'] === 'chart' ? chartMemoryLimit() : values['operator-memory-limit'],
      );
const cgroup =
  memoryLimit === undefined ? undefined : MemoryCgroup.create('basic-operator-bench', memoryLimit);

/**
 * The operator as its image and chart run it: the compiled dist/main.js, with the image's Node flags,
 * inside the chart's memory limit.
 */
function startOperator(ns: string, ports: { metrics: number; health: number; inspector: number }) {
  const node = (args: string[]) =>
    cgroup?.wrap(process.execPath, args) ?? { command: process.execPath, args };
  return new OperatorProcess({
    name: 'operator',
    ...node([
      ...(values['image-node-flags'] ? imageNodeFlags() : []),
      ...values['node-flags'].split(' ').filter(Boolean),
      `--inspect-port=127.0.0.1:${ports.inspector}`,
      ...(values['profile-operator'] ? ['--cpu-prof', `--cpu-prof-dir=${values['profile-operator']}`] : []),
      'dist/main.js',
      '--kubeconfig',
      info.kubeconfig,
      '--namespaces',
      ns,
      '--kube-api-qps',
      String(OP_QPS),
      '--kube-api-burst',
      String(OP_BURST),
      '--max-concurrent-reconciles',
      String(KCM_WORKERS),
      // As the chart runs it (and kube-controller-manager runs): with a leader lease to renew.
      '--leader-elect',
      '--leader-election-namespace',
      ns,
      '--metrics-secure=false',
      '--metrics-bind-address',
      `127.0.0.1:${ports.metrics}`,
      '--health-probe-bind-address',
      `127.0.0.1:${ports.health}`,
      '--log-level',
      'warn',
    ]),
    echo: process.stderr,
  });
}

async function operatorSide(): Promise<SideResult> {
  const ns = 'bench-op';
  await freshNamespace(ns);
  const ports = { metrics: await freePort(), health: await freePort(), inspector: await freePort() };
  let operator = startOperator(ns, ports);
  try {
    await operator.waitForHttp('ready, its caches synced', ports.health, '/readyz', 120_000);
    const before = operator.stats();
    const stop = new AbortController();
    const creates = new PodCreates(client, ns, stop.signal);
    const readiness = watchReadiness<BasicDeployment>(
      BASIC_DEPLOYMENT,
      ns,
      (d) => d.status?.ready === true && d.status.observedGeneration === d.metadata.generation,
    );
    await readiness.synced();
    const current = operator;
    const trace = values.trace
      ? new SideTrace({
          metricsUrl: `http://127.0.0.1:${ports.metrics}/metrics`,
          cpuTicks: () => controlPlaneTicks().set('operator', current.stats().cpuTicks),
        })
      : undefined;
    await sleep(500);
    const started = Date.now();
    const operatorTicks = (): readonly [string, number] => ['operator', current.stats().cpuTicks];
    const ticksAtStart = machineTicks(operatorTicks());
    try {
      await parallel([...Array(N).keys()], 16, (i) =>
        client.create<BasicDeployment>(BASIC_DEPLOYMENT, {
          apiVersion: BASIC_DEPLOYMENT.apiVersion,
          kind: BASIC_DEPLOYMENT.kind,
          metadata: { name: `d-${i}`, namespace: ns },
          spec: {
            replicas: R,
            selector: { matchLabels: { app: `d-${i}` } },
            template: podTemplate(`d-${i}`),
          },
        }),
      );
      await Promise.race([
        readiness.all(),
        operator.exited.then((exit) => {
          const oom = exit.signal === 'SIGKILL' && cgroup && cgroup.failures() > 0;
          throw new Error(
            `the operator exited (${exit.signal ?? exit.code})${oom ? `: killed at its ${memoryLimit! / 1048576} MiB memory limit` : ''}\n${operator.describe()}`,
          );
        }),
      ]);
    } finally {
      readiness.stop();
      await trace?.finish();
    }
    const seconds = (Date.now() - started) / 1000;
    const rolloutCpu = cpuSpent(ticksAtStart, machineTicks(operatorTicks()));
    const after = operator.stats();
    if (trace) log(`operator side, per second:\n${trace.render(creates)}`);
    const result: SideResult = {
      seconds,
      podsPerSecond: rate(creates.times),
      timeline: perSecond(creates.times, started),
      boundTimeline: perSecond(creates.bound, started),
      readyTimeline: perSecond(creates.ready, started),
      peakRssMiB: after.rssPeakKiB / 1024,
      cpuSeconds: (after.cpuTicks - before.cpuTicks) / 100,
      rolloutCpu,
      memoryLimitMiB: memoryLimit === undefined ? undefined : memoryLimit / 1048576,
    };
    try {
      const pid = operator.child.pid!;
      Object.assign(
        result,
        await settledMeasures(
          scaler(BASIC_DEPLOYMENT, ns),
          { deployments: BASIC_DEPLOYMENT, sets: BASIC_REPLICA_SET, namespace: ns },
          creates,
          {
            cpuTicks: () => procStats(pid).cpuTicks,
            metrics: async () => (await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).text(),
            reconcileSeries: 'controller_runtime_reconcile_total',
            controllers: ['basicdeployment', 'basicreplicaset'],
          },
        ),
      );
      result.settledRssMiB = procStats(pid).rssKiB / 1024;
      result.heap = await heapAfterGc(pid, ports.inspector, values['heap-snapshot']);
    } finally {
      stop.abort();
    }
    result.restart = async () => {
      log('  restarting the operator (SIGTERM, then a new process)');
      await operator.stop({ graceMs: 30_000 });
      const startedAt = Date.now();
      operator = startOperator(ns, ports);
      try {
        return await operatorStartup(startedAt, ports);
      } finally {
        await operator.stop({ graceMs: 30_000 });
      }
    };
    result.stop = () => operator.stop({ graceMs: 30_000 });
    return result;
  } catch (err) {
    await operator.stop({ graceMs: 30_000 });
    throw err;
  }
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
  await runOk('npm', ['run', 'build']);
}
let raw: RawLimit | undefined;
let kcm: (SideResult & { machine: string }) | undefined;
let op: (SideResult & { machine: string }) | undefined;
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
    raw = await rawLimit(Number(values['raw-pods'] ?? N * R), Number(values['raw-repeats']));
  } else if (side === 'kcm') {
    log('apps/v1 Deployments with kube-controller-manager');
    kcm = await observeSide('kube-controller-manager', kcmSide);
    await restartIfAsked(kcm);
    log('deleting the kube-controller-manager side');
    await deleteNamespace('bench-kcm');
  } else {
    log('BasicDeployments with basic-operator');
    op = await observeSide('basic-operator', operatorSide);
    await restartIfAsked(op);
    await deleteNamespace('bench-op');
  }
}

const rawLimitPodsPerSecond = raw ? Math.min(raw.throttled, raw.unthrottled) : undefined;
process.stdout.write(`${report({ kcm, op, raw, rawLimit: rawLimitPodsPerSecond }).join('\n')}\n`);
if (values.json) {
  writeFileSync(
    values.json,
    `${JSON.stringify({ workload: { deployments: N, replicas: R }, raw, kcm, operator: op }, null, 2)}\n`,
  );
}
cgroup?.remove();
process.exit(0);

function report({
  kcm,
  op,
  raw,
  rawLimit,
}: {
  kcm?: SideResult & { machine: string };
  op?: SideResult & { machine: string };
  raw?: RawLimit;
  rawLimit?: number;
}): string[] {
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
    ...(values.timeline && kcm
      ? [
          `pods created per second, kube-controller-manager: ${kcm.timeline.join(' ')}`,
          `pods bound per second, kube-controller-manager: ${kcm.boundTimeline.join(' ')}`,
          `pods ready per second, kube-controller-manager: ${kcm.readyTimeline.join(' ')}`,
        ]
      : []),
    ...(values.timeline && op
      ? [
          `pods created per second, basic-operator: ${op.timeline.join(' ')}`,
          `pods bound per second, basic-operator: ${op.boundTimeline.join(' ')}`,
          `pods ready per second, basic-operator: ${op.readyTimeline.join(' ')}`,
        ]
      : []),
  ];
}
