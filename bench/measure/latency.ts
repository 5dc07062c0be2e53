import type { PodCreates } from './pod-creates.ts';
import type { QueueTimes } from './queue-times.ts';
import type { SetScales } from './set-scales.ts';
import { percentile } from './stats.ts';

export interface ReactionLatency {
  changes: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Every change's latency, in order. */
  samplesMs: number[];
  /** Over the changes, each controller's work queue: items, mean time queued and worked. */
  queues?: Record<string, QueueTimes>;
  /** The two hops of a reaction: from the change to its set scaled, and from there to the pod. */
  hops?: { toSetP50Ms: number; toSetP99Ms: number; setToPodP50Ms: number; setToPodP99Ms: number };
}

export interface LatencyOptions {
  /** Deployments d-0 .. d-(deployments-1), each with `replicas` replicas and pods labelled app=d-i. */
  deployments: number;
  replicas: number;
  changes: number;
  /** Sets spec.replicas of one deployment (a merge patch of the side's kind). */
  scale(name: string, replicas: number): Promise<unknown>;
  creates: PodCreates;
  /** When given, each change's time to its set scaled is measured too. */
  setScales?: SetScales;
  /** Quiet time after each change's pod, so the next change meets an idle system. */
  settleMs?: number;
}

/**
 * Reaction latency with everything settled: for each change, the time from sending a scale-up of
 * one deployment (`kubectl scale` does the same PATCH) to the API server publishing the first pod
 * it creates. The deployments are taken in turn, so a deployment is scaled again only after all
 * the others (with more changes than deployments, its target grows by one each round).
 */
export async function reactionLatency(options: LatencyOptions): Promise<ReactionLatency> {
  const samples: number[] = [];
  const toSet: number[] = [];
  const setToPod: number[] = [];
  for (let i = 0; i < options.changes; i++) {
    const name = `d-${i % options.deployments}`;
    const replicas = options.replicas + 1 + Math.floor(i / options.deployments);
    const created = options.creates.next(name, 60_000);
    const scaled = options.setScales?.next(name);
    const started = Date.now();
    await options.scale(name, replicas);
    const createdAt = await created;
    samples.push(createdAt - started);
    if (scaled) {
      // The set's event can only come before its pod's; one missing is a set scaled out of sight.
      const scaledAt = await Promise.race([
        scaled,
        new Promise<undefined>((r) => setTimeout(() => r(undefined), 1000)),
      ]);
      options.setScales?.forget(name);
      if (scaledAt !== undefined) {
        toSet.push(scaledAt - started);
        setToPod.push(createdAt - scaledAt);
      }
    }
    await new Promise((r) => setTimeout(r, options.settleMs ?? 300));
  }
  return {
    changes: samples.length,
    p50Ms: percentile(samples, 50),
    p99Ms: percentile(samples, 99),
    maxMs: Math.max(...samples),
    samplesMs: samples,
    ...(toSet.length > 0 && {
      hops: {
        toSetP50Ms: percentile(toSet, 50),
        toSetP99Ms: percentile(toSet, 99),
        setToPodP50Ms: percentile(setToPod, 50),
        setToPodP99Ms: percentile(setToPod, 99),
      },
    }),
  };
}

/** "to set p50/p99 A/B ms, set to pod C/D ms", or that the hops were not measured. */
export function describeHops(latency: ReactionLatency): string {
  const h = latency.hops;
  if (!h) return 'hops not measured';
  return `to set scaled p50/p99 ${h.toSetP50Ms}/${h.toSetP99Ms} ms, set to pod ${h.setToPodP50Ms}/${h.setToPodP99Ms} ms`;
}
