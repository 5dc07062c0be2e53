import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { KubeConfig } from '@kubernetes/client-node';
import { runOk } from '../e2e/providers/exec.ts';
import { selectProvider } from '../e2e/providers/index.ts';
import { clusterDir, KCM_BURST, KCM_QPS, KCM_WORKERS, LocalProvider } from '../e2e/providers/local/index.ts';
import { BASIC_DEPLOYMENT, type BasicDeployment } from '../src/apis/index.ts';
import { Informer } from '../src/runtime/cache/informer.ts';
import { isNotFound } from '../src/runtime/client/errors.ts';
import { KubeClient } from '../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../src/runtime/client/resource.ts';
import { rootLogger } from '../src/runtime/log.ts';
import { TokenBucket } from '../src/runtime/queue/index.ts';
import { freePort, OperatorProcess, procStats } from '../test/support/operator-process.ts';
import { waitFor } from '../test/support/wait.ts';
import { SideTrace } from './trace.ts';

/**
 * Side-by-side benchmark in one run on the local cluster: N BasicDeployments of R replicas handled
 * by the operator, and the same workload as apps/v1 Deployments handled by kube-controller-manager,
 * both with the same client QPS budget; plus the raw pod-create throughput of the API server.
 *
 *   npm run bench -- --deployments 100 --replicas 10
 */
const { values } = parseArgs({
  options: {
    deployments: { type: 'string', default: '100' },
    replicas: { type: 'string', default: '10' },
    qps: { type: 'string', default: String(KCM_QPS) },
    burst: { type: 'string', default: String(KCM_BURST) },
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
    /** Print the pods each side created in each second, to see ramp-up and tail. */
    timeline: { type: 'boolean', default: false },
    /** Print, for each second of the operator side, its requests, queues and every process's CPU. */
    trace: { type: 'boolean', default: false },
    /** Write a V8 CPU profile of the operator process into this directory (open it in Chrome DevTools). */
    'profile-operator': { type: 'string' },
  },
  allowNegative: true,
});
const N = Number(values.deployments);
const R = Number(values.replicas);
const QPS = Number(values.qps);
const BURST = Number(values.burst);
const TIMEOUT_MS = Number(values.timeout) * 1000;
const OP_QPS = QPS * Number(values['operator-qps-factor']);
const OP_BURST = BURST * Number(values['operator-qps-factor']);

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const provider = selectProvider();
const info = await provider.up();
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

/** Counts pod creations as the API server publishes them. */
function watchPodCreates(namespace: string, signal: AbortSignal) {
  const times: number[] = [];
  void (async () => {
    let rv = (await client.list(CoreTypes.Pod, { namespace, limit: 1 })).metadata?.resourceVersion;
    while (!signal.aborted) {
      try {
        for await (const e of client.watch<V1Pod>(CoreTypes.Pod, {
          namespace,
          resourceVersion: rv,
          signal,
          timeoutSeconds: 600,
        })) {
          if (e.type === 'ADDED') times.push(Date.now());
          rv = e.object.metadata?.resourceVersion ?? rv;
        }
      } catch {
        if (signal.aborted) return;
      }
    }
  })();
  return times;
}

/** Pods created in each second after `started`. */
function timeline(times: number[], started: number): number[] {
  const buckets: number[] = [];
  for (const t of times) {
    const i = Math.max(0, Math.floor((t - started) / 1000));
    while (buckets.length <= i) buckets.push(0);
    buckets[i]!++;
  }
  return buckets;
}

function rate(times: number[]): number {
  if (times.length < 2) return 0;
  return (times.length - 1) / ((times[times.length - 1]! - times[0]!) / 1000);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
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
  peakRssMiB?: number;
  cpuSeconds?: number;
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

function kcmPid(): number | undefined {
  try {
    return Number(readFileSync(join(clusterDir(), 'pids', 'kube-controller-manager.pid'), 'utf8').trim());
  } catch {
    return undefined;
  }
}

async function kcmSide(): Promise<SideResult> {
  const ns = 'bench-kcm';
  await freshNamespace(ns);
  const pid = info.provider === 'local' ? kcmPid() : undefined;
  const before = pid ? procStats(pid) : undefined;
  const stop = new AbortController();
  const creates = watchPodCreates(ns, stop.signal);
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
    stop.abort();
  }
  const seconds = (Date.now() - started) / 1000;
  const after = pid ? procStats(pid) : undefined;
  return {
    seconds,
    podsPerSecond: rate(creates),
    timeline: timeline(creates, started),
    peakRssMiB: after ? after.rssPeakKiB / 1024 : undefined,
    cpuSeconds: before && after ? (after.cpuTicks - before.cpuTicks) / 100 : undefined,
  };
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

/**
 * apiserver_request_total summed by "VERB resource[/subresource]", refused requests apart
 * ("... refused 422"); and watchers the API server closed because they did not keep up
 * (apiserver_terminated_watchers_total, as "slow watchers closed resource").
 */
async function apiRequestCounts(): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const add = (key: string, line: string) =>
    counts.set(key, (counts.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  for (const line of (await kubectl(['get', '--raw', '/metrics'])).split('\n')) {
    const metric = line.slice(0, line.indexOf('{'));
    if (metric !== 'apiserver_request_total' && metric !== 'apiserver_terminated_watchers_total') continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const resource = `${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`;
    if (metric === 'apiserver_terminated_watchers_total') add(`slow watchers closed ${resource}`, line);
    else if (Number(labels.code) >= 400) add(`${labels.verb} ${resource} refused ${labels.code}`, line);
    else add(`${labels.verb} ${resource}`, line);
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
  const total = cpu.reduce((sum, [, seconds]) => sum + seconds, 0);
  const writes = [
    ...requestDelta(requestsBefore, requestsAfter, /^(POST|PUT|PATCH|DELETE) \S+$/, 50),
    ...requestDelta(requestsBefore, requestsAfter, / (refused|closed) /, 1),
  ].sort((a, b) => b[1] - a[1]);
  const machine =
    cpu.length === 0
      ? ''
      : `CPU seconds during ${name} (${result.seconds.toFixed(1)}s on ${availableParallelism()} cores): ` +
        `${cpu.map(([c, seconds]) => `${c} ${seconds.toFixed(1)}`).join(', ')}; ` +
        `${((total / (result.seconds * availableParallelism())) * 100).toFixed(0)}% of the machine\n` +
        `API writes during ${name}: ${writes.map(([key, n]) => `${key} ${n}`).join(', ')}`;
  return { ...result, machine };
}

async function operatorSide(): Promise<SideResult> {
  const ns = 'bench-op';
  await freshNamespace(ns);
  const metricsPort = await freePort();
  const healthPort = await freePort();
  const operator = new OperatorProcess({
    name: 'operator',
    args: [
      ...(values['profile-operator'] ? ['--cpu-prof', `--cpu-prof-dir=${values['profile-operator']}`] : []),
      'src/main.ts',
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
      '--metrics-bind-address',
      `127.0.0.1:${metricsPort}`,
      '--health-probe-bind-address',
      `127.0.0.1:${healthPort}`,
      '--log-level',
      'warn',
    ],
    echo: process.stderr,
  });
  try {
    await operator.waitForHttp('ready, its caches synced', healthPort, '/readyz', 120_000);
    const before = operator.stats();
    const stop = new AbortController();
    const creates = watchPodCreates(ns, stop.signal);
    const readiness = watchReadiness<BasicDeployment>(
      BASIC_DEPLOYMENT,
      ns,
      (d) => d.status?.ready === true && d.status.observedGeneration === d.metadata.generation,
    );
    await readiness.synced();
    const trace = values.trace
      ? new SideTrace({
          metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
          cpuTicks: () => controlPlaneTicks().set('operator', operator.stats().cpuTicks),
        })
      : undefined;
    await sleep(500);
    const started = Date.now();
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
      await readiness.all();
    } finally {
      readiness.stop();
      stop.abort();
      await trace?.finish();
    }
    const seconds = (Date.now() - started) / 1000;
    const after = operator.stats();
    if (trace) log(`operator side, per second:\n${trace.render(creates)}`);
    return {
      seconds,
      podsPerSecond: rate(creates),
      timeline: timeline(creates, started),
      peakRssMiB: after.rssPeakKiB / 1024,
      cpuSeconds: (after.cpuTicks - before.cpuTicks) / 100,
    };
  } finally {
    await operator.stop({ graceMs: 30_000 });
  }
}

log(
  `workload: ${N} deployments x ${R} replicas; kube-controller-manager: ${QPS} qps / ${BURST} burst per controller ` +
    `(deployment + replicaset); operator: ${OP_QPS} qps / ${OP_BURST} burst shared by all its controllers; ` +
    `${KCM_WORKERS} workers per controller on both sides`,
);
// Sides run in the order given. Without a restart between them, the control plane carries the
// previous sides' churn (its heap, caches, etcd's history), so swapping the order shows what a
// side's place costs it.
const sides = values.sides.split(',').map((side) => side.trim());
for (const side of sides) {
  if (!['raw', 'kcm', 'operator'].includes(side)) throw new Error(`--sides: unknown side "${side}"`);
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
    log('deleting the kube-controller-manager side');
    await deleteNamespace('bench-kcm');
  } else {
    log('BasicDeployments with basic-operator');
    op = await observeSide('basic-operator', operatorSide);
    await deleteNamespace('bench-op');
  }
}

const f = (n: number, d = 1) => n.toFixed(d);
const row = (side: string, r: SideResult) =>
  `| ${N}x${R} | ${side} | ${f(r.seconds)} | ${f(r.podsPerSecond)} | ${f(r.peakRssMiB ?? 0)} | ${f(r.cpuSeconds ?? 0)} |`;
const table = [
  `| workload | side | time to all ready (s) | pods created/s | peak RSS (MiB) | CPU (s) |`,
  `|---|---|---|---|---|---|`,
  ...(kcm ? [row('kube-controller-manager (whole process)', kcm)] : []),
  ...(op ? [row('basic-operator', op)] : []),
  '',
  ...(kcm && op ? [`time ratio operator/KCM: ${f(op.seconds / kcm.seconds, 2)} (goal <= 1.00)`] : []),
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
  ...(raw && op
    ? [
        `operator pods/s vs raw limit (the lower of the two, ${f(Math.min(raw.throttled, raw.unthrottled))} pods/s): ` +
          `${f((op.podsPerSecond / Math.min(raw.throttled, raw.unthrottled)) * 100, 0)}% (goal >= 80%)`,
      ]
    : []),
  ...(kcm ? [kcm.machine] : []),
  ...(op ? [op.machine] : []),
  ...(values.timeline && kcm
    ? [`pods created per second, kube-controller-manager: ${kcm.timeline.join(' ')}`]
    : []),
  ...(values.timeline && op ? [`pods created per second, basic-operator: ${op.timeline.join(' ')}`] : []),
];
process.stdout.write(`${table.join('\n')}\n`);
process.exit(0);
