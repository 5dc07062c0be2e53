import { labelledSamples } from './measure/prometheus-text.ts';

/**
 * Per-second samples of one benchmark side, to see where a slow second went: the operator's own
 * requests (rest_client_requests_total by method), who waits for its rate limit, its work queues,
 * and the CPU each process used in that second.
 */

export interface TraceSource {
  /** The operator's /metrics URL, when the side runs the operator. */
  metricsUrl?: string;
  /** CPU ticks (1/100 s) of each process that matters. */
  cpuTicks(): Map<string, number>;
}

interface Sample {
  at: number;
  ticks: Map<string, number>;
  metrics: Map<string, number>;
}

const TRACED_METRICS = [
  'rest_client_requests_total',
  'basic_operator_client_throttle_waiting',
  'workqueue_depth',
  'controller_runtime_active_workers',
];

async function scrape(url: string | undefined): Promise<Map<string, number>> {
  const values = new Map<string, number>();
  if (!url) return values;
  const text = await fetch(url, { signal: AbortSignal.timeout(2000) })
    .then((r) => r.text())
    .catch(() => '');
  for (const { metric: name, labels, value } of labelledSamples(text, TRACED_METRICS)) {
    const key =
      name === 'rest_client_requests_total'
        ? `req ${labels.method}`
        : name === 'basic_operator_client_throttle_waiting'
          ? `wait ${labels.priority}`
          : name === 'workqueue_depth'
            ? `depth ${labels.name}`
            : `busy ${labels.controller}`;
    values.set(key, (values.get(key) ?? 0) + value);
  }
  return values;
}

export class SideTrace {
  private readonly samples: Sample[] = [];
  private readonly stop = new AbortController();
  private readonly done: Promise<void>;
  private readonly source: TraceSource;

  constructor(source: TraceSource) {
    this.source = source;
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stop.signal.aborted) {
      const at = Date.now();
      try {
        this.samples.push({
          at,
          ticks: this.source.cpuTicks(),
          metrics: await scrape(this.source.metricsUrl),
        });
      } catch {
        // a process went away (the side failed): this second has no sample
      }
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - at))));
    }
  }

  async finish(): Promise<void> {
    this.stop.abort();
    await this.done;
  }

  /** A table, one row per second: pods created, operator requests, waiters, queues, CPU %. */
  render(pods: { times: readonly number[]; bound: readonly number[]; ready: readonly number[] }): string {
    const first = this.samples[0];
    if (!first) return '';
    const counters = [...new Set(this.samples.flatMap((s) => [...s.metrics.keys()]))]
      .filter((k) => k.startsWith('req '))
      .sort();
    const gauges = [...new Set(this.samples.flatMap((s) => [...s.metrics.keys()]))]
      .filter((k) => !k.startsWith('req '))
      .sort();
    const processes = [...first.ticks.keys()];
    const header = [
      't',
      'pods',
      'bound',
      'ready',
      ...counters,
      ...gauges,
      ...processes.map((p) => `cpu% ${p}`),
    ];
    const rows = [header.join('\t')];
    for (let i = 1; i < this.samples.length; i++) {
      const prev = this.samples[i - 1]!;
      const cur = this.samples[i]!;
      const seconds = (cur.at - prev.at) / 1000;
      const inSecond = (times: readonly number[]): string =>
        String(times.filter((t) => t > prev.at && t <= cur.at).length);
      const row = [
        ((cur.at - first.at) / 1000).toFixed(0),
        inSecond(pods.times),
        inSecond(pods.bound),
        inSecond(pods.ready),
        ...counters.map((k) => String((cur.metrics.get(k) ?? 0) - (prev.metrics.get(k) ?? 0))),
        ...gauges.map((k) => String(cur.metrics.get(k) ?? '')),
        ...processes.map((p) => (((cur.ticks.get(p) ?? 0) - (prev.ticks.get(p) ?? 0)) / seconds).toFixed(0)),
      ];
      rows.push(row.join('\t'));
    }
    return rows.join('\n');
  }
}
