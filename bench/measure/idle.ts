import { labelledSamples } from './prometheus-text.ts';

/**
 * What a controller process costs when nothing changes: over a window with every object settled,
 * its CPU seconds, its work items per controller and its API requests per method, read from its
 * own Prometheus metrics (controller-runtime's and client-go's names, which both processes export).
 */
export interface IdleCost {
  seconds: number;
  cpuSeconds: number;
  /** Items each controller's work queue handed to a worker, per second. */
  reconcilesPerSecond: Record<string, number>;
  /** API requests by method over the window. */
  requests: Record<string, number>;
}

export interface IdleSource {
  cpuTicks(): number;
  metrics(): Promise<string>;
  /** Which series count a reconcile: the operator's reconcile_total, kube-controller-manager's queue. */
  reconcileSeries: 'controller_runtime_reconcile_total' | 'workqueue_work_duration_seconds_count';
  /** Work queue (or controller) names to report; others are ignored. */
  controllers: string[];
}

export async function idleCost(source: IdleSource, seconds: number): Promise<IdleCost> {
  const before = parseCounters(await source.metrics(), source);
  const ticksBefore = source.cpuTicks();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const after = parseCounters(await source.metrics(), source);
  const cpuSeconds = (source.cpuTicks() - ticksBefore) / 100;
  const delta = (a: Map<string, number>, b: Map<string, number>) =>
    Object.fromEntries([...a].map(([key, n]) => [key, n - (b.get(key) ?? 0)]));
  const reconciles = delta(after.reconciles, before.reconciles);
  return {
    seconds,
    cpuSeconds,
    reconcilesPerSecond: Object.fromEntries(
      source.controllers.map((c) => [c, (reconciles[c] ?? 0) / seconds]),
    ),
    requests: Object.fromEntries(
      Object.entries(delta(after.requests, before.requests)).filter(([, n]) => n > 0),
    ),
  };
}

function parseCounters(text: string, source: IdleSource) {
  const reconciles = new Map<string, number>();
  const requests = new Map<string, number>();
  for (const { metric, labels, value } of labelledSamples(text, [
    source.reconcileSeries,
    'rest_client_requests_total',
  ])) {
    if (metric === 'rest_client_requests_total') {
      const method = labels.method ?? '?';
      requests.set(method, (requests.get(method) ?? 0) + value);
    } else {
      const name = labels.controller ?? labels.name ?? '?';
      reconciles.set(name, (reconciles.get(name) ?? 0) + value);
    }
  }
  return { reconciles, requests };
}

export function describeIdle(cost: IdleCost): string {
  const reconciles = Object.entries(cost.reconcilesPerSecond)
    .map(([c, n]) => `${c} ${n.toFixed(2)}/s`)
    .join(', ');
  const requests = Object.entries(cost.requests)
    .map(([m, n]) => `${m} ${n}`)
    .join(', ');
  return `${cost.cpuSeconds.toFixed(2)} CPU s in ${cost.seconds} s; reconciles ${reconciles}; requests ${requests || 'none'}`;
}
