import { availableParallelism } from 'node:os';
import { procStats } from '../../e2e/support/operator-process.ts';
import { Informer } from '../../src/runtime/cache/informer.ts';
import type { KubeObject } from '../../src/runtime/client/object.ts';
import type { ResourceType } from '../../src/runtime/client/resource.ts';
import { rootLogger } from '../../src/runtime/log.ts';
import { parallel, sleep } from '../async.ts';
import { cpuSpent, type MeasuredCluster, requestDelta } from '../cluster.ts';
import { log } from '../log.ts';
import { type IdleSource, idleCost } from '../measure/idle.ts';
import { describeHops, reactionLatency } from '../measure/latency.ts';
import { PodCreates, perSecond, rate } from '../measure/pod-creates.ts';
import { describeQueueTimes, queueTimes } from '../measure/queue-times.ts';
import { type ScalableObject, ScaleUps } from '../measure/scale-ups.ts';
import { describeServerTime, serverTime } from '../measure/server-time.ts';
import type { BenchSide, ObservedSide, SideController, SideResult } from './side.ts';

/** How the sides are measured: bench/deployments.ts's flags (--timeout, --trace, --latency-changes, ...). */
export interface SideSettings {
  readonly deployments: number;
  readonly replicas: number;
  readonly timeoutMs: number;
  readonly trace: boolean;
  readonly latencyChanges: number;
  readonly latencyGapMs: number;
  readonly settleMs: number;
  readonly idleSeconds: number;
}

/** What the cluster did during one side: CPU per process and the API requests that wrote. */
export async function observeSide<T extends ScalableObject>(
  cluster: MeasuredCluster,
  side: BenchSide<T>,
  settings: SideSettings,
): Promise<ObservedSide> {
  const ticksBefore = cluster.controlPlaneTicks();
  const requestsBefore = await cluster.apiRequestCounts();
  const benchBefore = process.cpuUsage();
  const result = await runSide(cluster, side, settings);
  const bench = process.cpuUsage(benchBefore);
  const ticksAfter = cluster.controlPlaneTicks();
  const requestsAfter = await cluster.apiRequestCounts();
  const cpu = [...ticksAfter].map(([c, t]) => [c, (t - (ticksBefore.get(c) ?? t)) / 100] as const);
  if (result.cpuSeconds !== undefined && side.ownProcess) cpu.push([side.ownProcess, result.cpuSeconds]);
  // The bench's own watches (pod creations, readiness) run on the same cores during a side.
  cpu.push(['bench', (bench.user + bench.system) / 1e6]);
  const writes = [
    ...requestDelta(requestsBefore, requestsAfter, /^(POST|PUT|PATCH|DELETE) \S+$/, 50),
    ...requestDelta(requestsBefore, requestsAfter, / (refused|closed) /, 1),
  ].sort((a, b) => b[1] - a[1]);
  const machine =
    cpu.length === 0
      ? ''
      : `CPU seconds during ${side.name} (${result.seconds.toFixed(1)}s to ready, then the settled measures, on ${availableParallelism()} cores): ` +
        `${cpu.map(([c, seconds]) => `${c} ${seconds.toFixed(1)}`).join(', ')}\n` +
        `API writes during ${side.name}: ${writes.map(([key, n]) => `${key} ${n}`).join(', ')}`;
  return { ...result, machine };
}

/**
 * One side, in its fresh namespace: its controller started, N deployments created at once, the time
 * until all are ready; then, on the settled system, the reaction latency and the idle cost.
 */
async function runSide<T extends ScalableObject>(
  cluster: MeasuredCluster,
  side: BenchSide<T>,
  settings: SideSettings,
): Promise<SideResult> {
  const ns = side.namespace;
  await cluster.freshNamespace(ns);
  const controller = await side.start();
  try {
    const before = controller.stats();
    const stop = new AbortController();
    const creates = new PodCreates(cluster.client, ns, stop.signal);
    const readiness = watchReadiness(cluster, side.deployments, ns, side.isReady, settings);
    await readiness.synced();
    const trace = settings.trace ? controller.trace?.() : undefined;
    await sleep(500);
    const started = Date.now();
    const ticksAtStart = cluster.machineTicks(ownTicks(side, controller));
    try {
      await parallel([...Array(settings.deployments).keys()], 16, (i) =>
        cluster.client.create<T>(side.deployments, side.deployment(i)),
      );
      await Promise.race([readiness.all(), ...(controller.exited ? [controller.exited()] : [])]);
    } finally {
      readiness.stop();
      await trace?.finish();
    }
    const seconds = (Date.now() - started) / 1000;
    const rolloutCpu = cpuSpent(ticksAtStart, cluster.machineTicks(ownTicks(side, controller)));
    const after = controller.stats();
    if (trace) log(`${side.name} side, per second:\n${trace.render(creates)}`);
    const result: SideResult = {
      seconds,
      podsPerSecond: rate(creates.times),
      timeline: perSecond(creates.times, started),
      boundTimeline: perSecond(creates.bound, started),
      readyTimeline: perSecond(creates.ready, started),
      peakRssMiB: after ? after.rssPeakKiB / 1024 : undefined,
      cpuSeconds: before && after ? (after.cpuTicks - before.cpuTicks) / 100 : undefined,
      rolloutCpu,
      memoryLimitMiB: controller.memoryLimitMiB,
    };
    try {
      const pid = controller.pid;
      if (pid) {
        Object.assign(
          result,
          await settledMeasures(cluster, side, creates, settings, {
            cpuTicks: () => procStats(pid).cpuTicks,
            metrics: () => controller.metrics(),
            ...side.work,
          }),
        );
        result.settledRssMiB = procStats(pid).rssKiB / 1024;
        if (controller.liveHeap) result.heap = await controller.liveHeap();
      }
    } finally {
      stop.abort();
    }
    result.restart = controller.restart;
    result.stop = controller.stop;
    return result;
  } catch (err) {
    await controller.stop?.();
    throw err;
  }
}

/** The controller's CPU ticks, named, when it runs apart from the control plane. */
function ownTicks<T extends ScalableObject>(
  side: BenchSide<T>,
  controller: SideController,
): readonly [string, number] | undefined {
  const stats = side.ownProcess ? controller.stats() : undefined;
  return side.ownProcess && stats ? [side.ownProcess, stats.cpuTicks] : undefined;
}

/**
 * Follows the side's deployments through an informer (our own), so knowing when all are ready costs
 * the API server one watch instead of a list of every object each second, and is exact to the event.
 * Start it before creating the objects; `all()` resolves when N are ready.
 */
function watchReadiness<T extends KubeObject>(
  cluster: MeasuredCluster,
  type: ResourceType<T>,
  namespace: string,
  isReady: (o: T) => boolean,
  { deployments: N, timeoutMs }: SideSettings,
) {
  const stop = new AbortController();
  const informer = new Informer<T>(cluster.client, type, { namespaces: [namespace] }, rootLogger('error'));
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
      const deadline = Date.now() + timeoutMs;
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

/** The settled-system measures both sides share: reaction latency, then idle cost. */
async function settledMeasures<T extends ScalableObject>(
  cluster: MeasuredCluster,
  side: BenchSide<T>,
  creates: PodCreates,
  settings: SideSettings,
  idle: IdleSource,
): Promise<Pick<SideResult, 'latency' | 'idle'>> {
  const result: Pick<SideResult, 'latency' | 'idle'> = {};
  const { latencyChanges, idleSeconds } = settings;
  if (latencyChanges > 0) {
    // The watches listed and the metrics read before the quiet time: none of it in the first change.
    const stopWatches = new AbortController();
    const scaleUps = (type: ResourceType<ScalableObject>, appOf: (o: ScalableObject) => string | undefined) =>
      new ScaleUps(cluster.client, type, side.namespace, stopWatches.signal, appOf);
    const deploymentScales = scaleUps(side.deployments, (d) => d.metadata?.name);
    const setScales = scaleUps(side.sets, (s) => s.metadata?.labels?.app);
    await Promise.all([deploymentScales.listed, setScales.listed]).catch((err: unknown) => {
      stopWatches.abort();
      throw err;
    });
    const before = await idle.metrics();
    const serverBefore = serverTime(await cluster.kubectl(['get', '--raw', '/metrics']));
    // The system idle before the first change (the reads above included).
    await sleep(settings.settleMs);
    log(`  reaction latency: ${latencyChanges} scale-ups, one at a time`);
    result.latency = await reactionLatency({
      deployments: settings.deployments,
      replicas: settings.replicas,
      changes: latencyChanges,
      scale: scaler(cluster, side.deployments, side.namespace),
      creates,
      deploymentScales,
      setScales,
      settleMs: settings.latencyGapMs,
    }).finally(() => stopWatches.abort());
    result.latency.queues = queueTimes(before, await idle.metrics(), idle.controllers);
    const serverAfter = serverTime(await cluster.kubectl(['get', '--raw', '/metrics']));
    log(
      `  kube-apiserver's mean time per request over the changes: ${describeServerTime(serverBefore, serverAfter, /^(POST pods|PATCH|PUT (deployments|replicasets|basicreplicasets))/, latencyChanges / 2)}`,
    );
    log(
      `  reaction: p50 ${result.latency.p50Ms} ms, p99 ${result.latency.p99Ms} ms; ${describeHops(result.latency)}; ${describeQueueTimes(result.latency.queues)}`,
    );
  }
  if (idleSeconds > 0) {
    await sleep(settings.settleMs);
    log(`  idle cost over ${idleSeconds}s`);
    result.idle = await idleCost(idle, idleSeconds);
  }
  return result;
}

/**
 * Sets spec.replicas of one deployment of `type` in `namespace` as `kubectl scale` does: a merge
 * patch of the scale subresource.
 */
export const scaler =
  <T extends KubeObject>(cluster: MeasuredCluster, type: ResourceType<T>, namespace: string) =>
  (name: string, replicas: number) =>
    cluster.client.patch(type, {
      namespace,
      name,
      patchType: 'merge',
      body: { spec: { replicas } },
      subresource: 'scale',
    });
