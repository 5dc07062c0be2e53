import { Informer } from '../../src/runtime/cache/informer.ts';
import { apiVersionOf, type ResourceType } from '../../src/runtime/client/resource.ts';
import { rootLogger } from '../../src/runtime/log.ts';
import { sleep } from '../async.ts';
import type { MeasuredCluster } from '../cluster.ts';
import { log } from '../log.ts';
import { type ReactionLatency, reactionLatency } from '../measure/latency.ts';
import { PodCreates } from '../measure/pod-creates.ts';
import { type ScalableObject, ScaleUps } from '../measure/scale-ups.ts';
import { scaler } from '../sides/run.ts';
import { deploymentSpec } from '../sides/side.ts';
import type { SoakDeployment, SoakKinds } from './kinds.ts';

export interface RolloutSettings {
  replicas: number;
  latencyChanges: number;
  latencyGapMs: number;
  /** Quiet time before the reaction latency. */
  settleMs: number;
  timeoutMs: number;
}

/** A normal tenant's rollout, timed: from its create, and from a template change, to all ready. */
export interface RolloutFigures {
  namespace: string;
  replicas: number;
  createToReadySeconds: number;
  changeToReadySeconds: number;
  latency: ReactionLatency;
}

/** The one deployment of a normal namespace; `d-0`, as the reaction latency names deployments. */
const NAME = 'd-0';

/**
 * In `namespace` (created fresh; its controller already watches it): one deployment of `kinds` of
 * R replicas created and waited for until ready, then its template changed and waited for until
 * every replica is updated and ready; then, settled, the reaction latency of the benchmark
 * (bench/measure/latency.ts): scale-ups one at a time, from the patch to the first pod published.
 */
export async function normalRollout(
  cluster: MeasuredCluster,
  namespace: string,
  settings: RolloutSettings,
  kinds: SoakKinds,
): Promise<RolloutFigures> {
  await cluster.freshNamespace(namespace);
  const stop = new AbortController();
  try {
    const creates = new PodCreates(cluster.client, namespace, stop.signal);
    const followed = new FollowedDeployment(cluster, namespace, kinds, stop.signal);
    await followed.synced();
    await sleep(500);

    const created = Date.now();
    const first = await cluster.client.create(kinds.deployments, {
      apiVersion: apiVersionOf(kinds.deployments),
      kind: kinds.deployments.kind,
      metadata: { name: NAME, namespace },
      spec: deploymentSpec(0, settings.replicas),
    });
    await followed.readyAt(first.metadata?.generation ?? 1, settings.timeoutMs);
    const createToReadySeconds = (Date.now() - created) / 1000;
    log(`  ${namespace}: ${settings.replicas} replicas ready in ${createToReadySeconds.toFixed(1)}s`);

    const changed = Date.now();
    const second = await cluster.client.patch(kinds.deployments, {
      namespace,
      name: NAME,
      patchType: 'merge',
      body: { spec: { template: { metadata: { annotations: { 'soak.basicoperator.dev/revision': '2' } } } } },
    });
    await followed.readyAt(second.metadata?.generation ?? 2, settings.timeoutMs);
    const changeToReadySeconds = (Date.now() - changed) / 1000;
    log(`  ${namespace}: template change rolled out in ${changeToReadySeconds.toFixed(1)}s`);

    const scaleUps = (type: ResourceType<ScalableObject>, appOf: (o: ScalableObject) => string | undefined) =>
      new ScaleUps(cluster.client, type, namespace, stop.signal, appOf);
    const deploymentScales = scaleUps(kinds.deployments, (d) => d.metadata?.name);
    const setScales = scaleUps(kinds.sets, (s) => s.metadata?.labels?.app);
    await Promise.all([deploymentScales.listed, setScales.listed]);
    await sleep(settings.settleMs);
    log(`  ${namespace}: reaction latency, ${settings.latencyChanges} scale-ups one at a time`);
    const latency = await reactionLatency({
      deployments: 1,
      replicas: settings.replicas,
      changes: settings.latencyChanges,
      scale: scaler(cluster, kinds.deployments, namespace),
      creates,
      deploymentScales,
      setScales,
      settleMs: settings.latencyGapMs,
    });
    log(`  ${namespace}: reaction p50 ${latency.p50Ms} ms, p99 ${latency.p99Ms} ms`);
    return {
      namespace,
      replicas: settings.replicas,
      createToReadySeconds,
      changeToReadySeconds,
      latency,
    };
  } finally {
    stop.abort();
  }
}

/** The deployment NAME of a namespace through an informer: resolves, to the event, when it is ready. */
class FollowedDeployment {
  private readonly informer: Informer<SoakDeployment>;
  private readonly namespace: string;
  private readonly kinds: SoakKinds;
  private waiter: ((d: SoakDeployment) => void) | undefined;

  constructor(cluster: MeasuredCluster, namespace: string, kinds: SoakKinds, signal: AbortSignal) {
    this.namespace = namespace;
    this.kinds = kinds;
    this.informer = new Informer<SoakDeployment>(
      cluster.client,
      kinds.deployments,
      { namespaces: [namespace] },
      rootLogger('error'),
    );
    const seen = (d: SoakDeployment) => {
      if (d.metadata?.name === NAME) this.waiter?.(d);
    };
    this.informer.addHandler({ onAdd: seen, onUpdate: (_, d) => seen(d) });
    this.informer.start(signal);
  }

  synced(): Promise<void> {
    return this.informer.waitForSync();
  }

  /** Ready for `generation` or a later one: every replica updated and available, no older pod left. */
  readyAt(generation: number, timeoutMs: number): Promise<void> {
    const ready = (d: SoakDeployment | undefined) => this.kinds.readyAt(d, generation);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        const status = this.informer.get(this.namespace, NAME)?.status;
        reject(
          new Error(
            `${NAME} not ready for generation ${generation} in ${timeoutMs} ms: ${JSON.stringify(status)}`,
          ),
        );
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiter = undefined;
        resolve();
      };
      this.waiter = (d) => {
        if (ready(d)) done();
      };
      if (ready(this.informer.get(this.namespace, NAME))) done();
    });
  }
}
