import type { PodCreates } from './pod-creates.ts';
import type { QueueTimes } from './queue-times.ts';
import type { ScaleUps } from './scale-ups.ts';
import { percentile } from './stats.ts';

export interface ReactionLatency {
  changes: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Every change's latency, in order. */
  samplesMs: number[];
  /** When each change was sent (ms since the epoch), to match a change with other logs. */
  startedAtMs: number[];
  /** Over the changes, each controller's work queue: items, mean time queued and worked. */
  queues?: Record<string, QueueTimes>;
  /**
   * The three hops of a reaction, p50 and p99 of each: from sending the change to the deployment's
   * new spec seen on a watch (the API server's write and watch), from there to its set scaled (the
   * deployment controller), and from there to the pod (the set controller).
   */
  hops?: Record<Hop, { p50Ms: number; p99Ms: number }>;
  /**
   * The controllers' part of each change, p50 and p99: from the deployment's new spec seen to the
   * pod (the last two hops added up). The first hop, the API server's write of the change itself, is
   * no controller's work; on the operator's side it is a custom resource's write.
   */
  controllers?: { p50Ms: number; p99Ms: number };
  /** Each change's three hops in the order of `Hop`, in the order of `samplesMs` (null: not seen). */
  hopSamplesMs?: ([number, number, number] | null)[];
}

export type Hop = 'toDeployment' | 'deploymentToSet' | 'setToPod';

export interface LatencyOptions {
  /** Deployments d-0 .. d-(deployments-1), each with `replicas` replicas and pods labelled app=d-i. */
  deployments: number;
  replicas: number;
  changes: number;
  /** Sets spec.replicas of one deployment (a merge patch of its scale subresource, as `kubectl scale`). */
  scale(name: string, replicas: number): Promise<unknown>;
  creates: PodCreates;
  /** When given with `setScales`, each change is split into its three hops. */
  deploymentScales?: ScaleUps;
  setScales?: ScaleUps;
  /** Quiet time after each change's pod, so the next change meets an idle system. */
  settleMs?: number;
}

/**
 * Reaction latency with everything settled: for each change, the time from sending a scale-up of
 * one deployment (the merge patch of its scale subresource that `kubectl scale` sends) to the API
 * server publishing the first pod it creates. The deployments are taken in turn, so a deployment is
 * scaled again only after all the others (with more changes than deployments, its target grows by
 * one each round).
 */
export async function reactionLatency(options: LatencyOptions): Promise<ReactionLatency> {
  const samples: number[] = [];
  const startedAt: number[] = [];
  const hopSamples: ([number, number, number] | null)[] = [];
  for (let i = 0; i < options.changes; i++) {
    const name = `d-${i % options.deployments}`;
    const replicas = options.replicas + 1 + Math.floor(i / options.deployments);
    const created = options.creates.next(name, 60_000);
    const deploymentSeen = options.deploymentScales?.next(name);
    const setSeen = options.setScales?.next(name);
    const started = Date.now();
    startedAt.push(started);
    await options.scale(name, replicas);
    const createdAt = await created;
    samples.push(createdAt - started);
    if (deploymentSeen && setSeen) {
      // Both events come before the pod's; one missing is an event out of sight.
      const [deploymentAt, setAt] = await Promise.all([deploymentSeen, setSeen].map(orNothingAfter(1000)));
      options.deploymentScales?.forget(name);
      options.setScales?.forget(name);
      hopSamples.push(
        deploymentAt !== undefined && setAt !== undefined
          ? [deploymentAt - started, setAt - deploymentAt, createdAt - setAt]
          : null,
      );
    }
    await new Promise((r) => setTimeout(r, options.settleMs ?? 300));
  }
  const seen = hopSamples.filter((change) => change !== null);
  const hop = (i: 0 | 1 | 2) => percentiles(seen.map((change) => change[i]));
  return {
    changes: samples.length,
    p50Ms: percentile(samples, 50),
    p99Ms: percentile(samples, 99),
    maxMs: Math.max(...samples),
    samplesMs: samples,
    startedAtMs: startedAt,
    ...(seen.length > 0 && {
      hops: { toDeployment: hop(0), deploymentToSet: hop(1), setToPod: hop(2) },
      controllers: percentiles(seen.map((change) => change[1] + change[2])),
      hopSamplesMs: hopSamples,
    }),
  };
}

const percentiles = (samples: number[]) => ({
  p50Ms: percentile(samples, 50),
  p99Ms: percentile(samples, 99),
});

const orNothingAfter =
  (ms: number) =>
  (seen: Promise<number>): Promise<number | undefined> =>
    Promise.race([seen, new Promise<undefined>((r) => setTimeout(() => r(undefined), ms))]);

/** "to the deployment p50/p99 A/B ms, deployment to set C/D ms, set to pod E/F ms", or that the hops were not measured. */
export function describeHops(latency: ReactionLatency): string {
  const h = latency.hops;
  if (!h) return 'hops not measured';
  const hop = (label: string, { p50Ms, p99Ms }: { p50Ms: number; p99Ms: number }) =>
    `${label} ${p50Ms}/${p99Ms} ms`;
  return [
    hop('to the deployment seen p50/p99', h.toDeployment),
    hop('deployment to set scaled', h.deploymentToSet),
    hop('set to pod', h.setToPod),
    ...(latency.controllers ? [hop('deployment seen to pod (the controllers)', latency.controllers)] : []),
  ].join(', ');
}
