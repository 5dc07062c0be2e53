import type { PodCreates } from './pod-creates.ts';
import type { QueueTimes } from './queue-times.ts';
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
}

export interface LatencyOptions {
  /** Deployments d-0 .. d-(deployments-1), each with `replicas` replicas and pods labelled app=d-i. */
  deployments: number;
  replicas: number;
  changes: number;
  /** Sets spec.replicas of one deployment (a merge patch of the side's kind). */
  scale(name: string, replicas: number): Promise<unknown>;
  creates: PodCreates;
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
  for (let i = 0; i < options.changes; i++) {
    const name = `d-${i % options.deployments}`;
    const replicas = options.replicas + 1 + Math.floor(i / options.deployments);
    const created = options.creates.next(name, 60_000);
    const started = Date.now();
    await options.scale(name, replicas);
    samples.push((await created) - started);
    await new Promise((r) => setTimeout(r, options.settleMs ?? 300));
  }
  return {
    changes: samples.length,
    p50Ms: percentile(samples, 50),
    p99Ms: percentile(samples, 99),
    maxMs: Math.max(...samples),
    samplesMs: samples,
  };
}
