import { labelledSamples } from './prometheus-text.ts';

/**
 * Where a controller process spends a reaction, from its own work-queue histograms (client-go's names,
 * which kube-controller-manager and the operator both export): between two scrapes, how many items
 * each queue handed out, how long they waited in it and how long a worker held them (the reconcile,
 * with its API calls). What is left of a change's latency is the watches and the API server.
 */
export interface QueueTimes {
  items: number;
  /** Mean time an item waited in the queue, from being added to a worker taking it. */
  waitMs: number;
  /** Mean time a worker held an item. */
  workMs: number;
}

const SERIES = {
  workqueue_queue_duration_seconds_sum: 'waitSum',
  workqueue_queue_duration_seconds_count: 'waitCount',
  workqueue_work_duration_seconds_sum: 'workSum',
  workqueue_work_duration_seconds_count: 'workCount',
} as const;
type Sums = Record<(typeof SERIES)[keyof typeof SERIES], number>;

function parse(text: string, queues: readonly string[]): Map<string, Sums> {
  const out = new Map<string, Sums>(
    queues.map((q) => [q, { waitSum: 0, waitCount: 0, workSum: 0, workCount: 0 }]),
  );
  for (const { metric, labels, value } of labelledSamples(text, Object.keys(SERIES))) {
    const name = labels.name ?? labels.controller;
    const sums = name === undefined ? undefined : out.get(name);
    if (sums) sums[SERIES[metric as keyof typeof SERIES]] += value;
  }
  return out;
}

/** Each queue's items and mean times between the scrapes `before` and `after`. */
export function queueTimes(
  before: string,
  after: string,
  queues: readonly string[],
): Record<string, QueueTimes> {
  const a = parse(before, queues);
  const b = parse(after, queues);
  const mean = (sum: number, count: number) => (count > 0 ? (sum / count) * 1000 : 0);
  return Object.fromEntries(
    queues.map((q) => {
      const x = a.get(q)!;
      const y = b.get(q)!;
      return [
        q,
        {
          items: y.workCount - x.workCount,
          waitMs: mean(y.waitSum - x.waitSum, y.waitCount - x.waitCount),
          workMs: mean(y.workSum - x.workSum, y.workCount - x.workCount),
        },
      ];
    }),
  );
}

export function describeQueueTimes(times: Record<string, QueueTimes>): string {
  return Object.entries(times)
    .map(
      ([q, t]) =>
        `${q}: ${t.items} items, ${t.waitMs.toFixed(1)} ms queued, ${t.workMs.toFixed(1)} ms worked`,
    )
    .join('; ');
}
