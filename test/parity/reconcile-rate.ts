import type { Registry } from 'prom-client';

/** controller_runtime_reconcile_total summed over results, per controller, from the operator's registry. */
export async function reconcileCounts(registry: Registry): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const metric = registry.getSingleMetric('controller_runtime_reconcile_total');
  if (!metric) return counts;
  const { values } = await metric.get();
  for (const v of values) {
    const controller = String(v.labels.controller ?? '');
    counts.set(controller, (counts.get(controller) ?? 0) + v.value);
  }
  return counts;
}

export interface RateSample {
  at: number;
  counts: Map<string, number>;
}

/**
 * Reconciles per controller between the first sample at or after `since` and the last sample, as
 * lines for the controllers that exceeded `perObjectPerSecond` per object (plus a small allowance for
 * one-off requeues), or [] when every controller stayed under it.
 */
export function hotControllers(
  samples: readonly RateSample[],
  since: number,
  objects: ReadonlyMap<string, number>,
  perObjectPerSecond = 1,
): string[] {
  const first = samples.find((s) => s.at >= since);
  const last = samples[samples.length - 1];
  if (!first || !last || last.at - first.at < 1000) return [];
  const seconds = (last.at - first.at) / 1000;
  const lines: string[] = [];
  for (const [controller, count] of objects) {
    const delta = (last.counts.get(controller) ?? 0) - (first.counts.get(controller) ?? 0);
    const allowed = Math.max(1, count) * perObjectPerSecond * seconds + 3;
    if (delta > allowed) {
      lines.push(
        `${controller}: ${delta} reconciles in ${seconds.toFixed(1)}s at rest for ${count} object(s) ` +
          `(${(delta / seconds / Math.max(1, count)).toFixed(1)}/object/s; at most ~${perObjectPerSecond})`,
      );
    }
  }
  return lines;
}
