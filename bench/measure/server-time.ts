import { labelledSamples } from './prometheus-text.ts';

/** Seconds spent and requests served by kube-apiserver, by "VERB resource[/subresource]". */
export type ServerTime = Map<string, { seconds: number; count: number }>;

/** Reads apiserver_request_duration_seconds (sum and count) from kube-apiserver's /metrics text. */
export function serverTime(text: string): ServerTime {
  const totals: ServerTime = new Map();
  for (const { metric, labels, value } of labelledSamples(text, [
    'apiserver_request_duration_seconds_sum',
    'apiserver_request_duration_seconds_count',
  ])) {
    const key = `${labels.verb} ${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`;
    const entry = totals.get(key) ?? { seconds: 0, count: 0 };
    if (metric.endsWith('_sum')) entry.seconds += value;
    else entry.count += value;
    totals.set(key, entry);
  }
  return totals;
}

/**
 * The mean time kube-apiserver took per request between two readings, for the keys matching
 * `keys` that served at least `min` requests: "PATCH basicreplicasets 3.1 ms (50)".
 */
export function describeServerTime(before: ServerTime, after: ServerTime, keys: RegExp, min: number): string {
  const parts: string[] = [];
  for (const [key, now] of after) {
    const then = before.get(key) ?? { seconds: 0, count: 0 };
    const count = now.count - then.count;
    if (count < min || !keys.test(key)) continue;
    parts.push(`${key} ${(((now.seconds - then.seconds) / count) * 1000).toFixed(1)} ms (${count})`);
  }
  return parts.join(', ') || 'none';
}
