import type { V1Pod } from '@kubernetes/client-node';
import { KubeClient } from '../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../src/runtime/client/resource.ts';
import { TokenBucket } from '../../src/runtime/queue/index.ts';
import { parallel } from '../async.ts';
import { type MeasuredCluster, requestDelta } from '../cluster.ts';
import { log } from '../log.ts';
import { median } from '../measure/stats.ts';

export interface RawLimit {
  throttled: number;
  /** Median of the unthrottled runs. */
  unthrottled: number;
  unthrottledRuns: number[];
}

/**
 * The raw pod-create limit: a plain client loop (32 in flight) creates `pods` pods, once held to the
 * operator's client budget and `repeats` times unthrottled (the API server's capacity).
 */
export async function rawLimit(
  cluster: MeasuredCluster,
  pods: number,
  repeats: number,
  budget: { qps: number; burst: number },
): Promise<RawLimit> {
  const ns = 'bench-raw';
  const run = async (throttle: TokenBucket | undefined) => {
    await cluster.freshNamespace(ns);
    const c = new KubeClient(cluster.kc, { throttle, userAgent: 'bench-raw' });
    const ticksBefore = cluster.controlPlaneTicks();
    const requestsBefore = await cluster.apiRequestCounts();
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
    const cpu = [...cluster.controlPlaneTicks()].map(
      ([c, t]) => `${c} ${((t - (ticksBefore.get(c) ?? t)) / 100).toFixed(1)}`,
    );
    const trouble = requestDelta(requestsBefore, await cluster.apiRequestCounts(), / (refused|closed) /, 1);
    log(
      `  raw loop ${throttle ? 'held to the budget' : 'unthrottled'}: ${(pods / seconds).toFixed(1)} pods/s; ` +
        `CPU seconds in ${seconds.toFixed(1)}s: ${cpu.join(', ')}` +
        (trouble.length ? `; ${trouble.map(([key, n]) => `${key} ${n}`).join(', ')}` : ''),
    );
    return pods / seconds;
  };
  const throttled = await run(new TokenBucket(budget.qps, budget.burst));
  const unthrottledRuns: number[] = [];
  for (let i = 0; i < Math.max(1, repeats); i++) unthrottledRuns.push(await run(undefined));
  await cluster.deleteNamespace(ns);
  return { throttled, unthrottled: median(unthrottledRuns), unthrottledRuns };
}
