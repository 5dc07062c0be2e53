import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { type Clock, realClock } from './clock.ts';

/** Hooks a WorkQueue calls as items move through it (client-go's queueMetrics + retryMetrics). */
export interface QueueMetrics<T> {
  /** `item` became dirty (a new add, not a de-duplicated one). */
  add(item: T): void;
  /** `item` was handed to a worker. */
  get(item: T): void;
  /** The worker finished `item`. */
  done(item: T): void;
  /** An item was scheduled for a delayed or rate-limited requeue. */
  retry(): void;
}

export const noopQueueMetrics: QueueMetrics<unknown> = {
  add() {},
  get() {},
  done() {},
  retry() {},
};

/** Where TimedQueueMetrics reports; shaped so that prom-client children (`metric.labels(...)`) fit. */
export interface QueueMetricSinks {
  depth: { inc(): void; dec(): void };
  adds: { inc(): void };
  /** Seconds an item waited in the queue before a worker took it. */
  queueDuration: { observe(seconds: number): void };
  /** Seconds a worker spent on an item. */
  workDuration: { observe(seconds: number): void };
  retries: { inc(): void };
}

/**
 * Turns queue events into depth, counters and latency observations, and keeps the start time of
 * every item in progress so stuck work can be measured (unfinishedWorkSeconds, longestRunningProcessorSeconds).
 */
export class TimedQueueMetrics<T> implements QueueMetrics<T> {
  readonly #sinks: QueueMetricSinks;
  readonly #clock: Clock;
  readonly #addedAt = new Map<T, number>();
  readonly #processingSince = new Map<T, number>();

  constructor(sinks: QueueMetricSinks, clock: Clock = realClock) {
    this.#sinks = sinks;
    this.#clock = clock;
  }

  add(item: T): void {
    this.#sinks.adds.inc();
    this.#sinks.depth.inc();
    if (!this.#addedAt.has(item)) this.#addedAt.set(item, this.#clock.now());
  }

  get(item: T): void {
    const now = this.#clock.now();
    this.#sinks.depth.dec();
    const addedAt = this.#addedAt.get(item);
    if (addedAt !== undefined) {
      this.#sinks.queueDuration.observe((now - addedAt) / 1000);
      this.#addedAt.delete(item);
    }
    this.#processingSince.set(item, now);
  }

  done(item: T): void {
    const since = this.#processingSince.get(item);
    if (since === undefined) return;
    this.#sinks.workDuration.observe((this.#clock.now() - since) / 1000);
    this.#processingSince.delete(item);
  }

  retry(): void {
    this.#sinks.retries.inc();
  }

  /** Total seconds of work in progress that work_duration has not observed yet. */
  unfinishedWorkSeconds(): number {
    const now = this.#clock.now();
    let totalMs = 0;
    for (const since of this.#processingSince.values()) totalMs += now - since;
    return totalMs / 1000;
  }

  /** Seconds the oldest item still in progress has been running (0 when idle). */
  longestRunningProcessorSeconds(): number {
    const now = this.#clock.now();
    let longestMs = 0;
    for (const since of this.#processingSince.values()) longestMs = Math.max(longestMs, now - since);
    return longestMs / 1000;
  }
}

export const WORKQUEUE_METRIC_NAMES = {
  depth: 'workqueue_depth',
  adds: 'workqueue_adds_total',
  queueDuration: 'workqueue_queue_duration_seconds',
  workDuration: 'workqueue_work_duration_seconds',
  unfinishedWork: 'workqueue_unfinished_work_seconds',
  longestRunningProcessor: 'workqueue_longest_running_processor_seconds',
  retries: 'workqueue_retries_total',
} as const;

/**
 * 10 ns to 10 s in powers of ten: client-go's ExponentialBuckets(10e-9, 10, 10). Newer controller-runtime
 * releases add two more (100 s, 1000 s); reconciles slower than 10 s land in +Inf here.
 */
export const WORKQUEUE_DURATION_BUCKETS: readonly number[] = Array.from(
  { length: 10 },
  (_, i) => 1e-8 * 10 ** i,
);

type QueueLabel = 'name' | 'controller';
const QUEUE_LABELS: readonly QueueLabel[] = ['name', 'controller'];

/** One registry's workqueue metrics, shared by every queue reporting to that registry. */
interface RegisteredWorkqueueMetrics {
  depth: Gauge<QueueLabel>;
  adds: Counter<QueueLabel>;
  queueDuration: Histogram<QueueLabel>;
  workDuration: Histogram<QueueLabel>;
  retries: Counter<QueueLabel>;
  /** Queues whose in-progress work the two stuck-work gauges read at scrape time, by queue name. */
  inProgressByQueue: Map<string, TimedQueueMetrics<unknown>>;
}

const registered = new WeakMap<Registry, RegisteredWorkqueueMetrics>();

/**
 * Metrics for the queue `name` (the controller name), under controller-runtime's names and labels
 * (`name` and `controller` both carry the controller name). The metric families are registered once
 * per registry and shared by every queue created for it. Instead of client-go's 500 ms ticker, the
 * unfinished-work and longest-running-processor gauges are computed when the registry is collected,
 * so no timer runs. Use one queue per name per registry: a second queue with the same name takes over
 * the stuck-work gauges of the first.
 */
export function createPrometheusQueueMetrics<T extends string>(
  registry: Registry,
  name: string,
  clock: Clock = realClock,
): TimedQueueMetrics<T> {
  const families = registered.get(registry) ?? registerWorkqueueMetrics(registry);
  const labels = { name, controller: name };

  const depth = families.depth.labels(labels);
  const adds = families.adds.labels(labels);
  const retries = families.retries.labels(labels);
  // Create every series up front, as client_golang's WithLabelValues does, so a controller that has
  // seen no work yet still shows zeros instead of missing series.
  depth.set(0);
  adds.inc(0);
  retries.inc(0);
  families.queueDuration.zero(labels);
  families.workDuration.zero(labels);

  const metrics = new TimedQueueMetrics<T>(
    {
      depth,
      adds,
      retries,
      queueDuration: families.queueDuration.labels(labels),
      workDuration: families.workDuration.labels(labels),
    },
    clock,
  );
  families.inProgressByQueue.set(name, metrics);
  return metrics;
}

function registerWorkqueueMetrics(registry: Registry): RegisteredWorkqueueMetrics {
  for (const metricName of Object.values(WORKQUEUE_METRIC_NAMES)) {
    if (registry.getSingleMetric(metricName)) {
      throw new Error(
        `${metricName} is already registered in this registry by other code; ` +
          'workqueue metrics must all come from createPrometheusQueueMetrics',
      );
    }
  }
  const inProgressByQueue = new Map<string, TimedQueueMetrics<unknown>>();
  const registers = [registry];
  const families: RegisteredWorkqueueMetrics = {
    depth: new Gauge({
      name: WORKQUEUE_METRIC_NAMES.depth,
      help: 'Current depth of workqueue',
      labelNames: QUEUE_LABELS,
      registers,
    }),
    adds: new Counter({
      name: WORKQUEUE_METRIC_NAMES.adds,
      help: 'Total number of adds handled by workqueue',
      labelNames: QUEUE_LABELS,
      registers,
    }),
    queueDuration: new Histogram({
      name: WORKQUEUE_METRIC_NAMES.queueDuration,
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: QUEUE_LABELS,
      buckets: [...WORKQUEUE_DURATION_BUCKETS],
      registers,
    }),
    workDuration: new Histogram({
      name: WORKQUEUE_METRIC_NAMES.workDuration,
      help: 'How long in seconds processing an item from workqueue takes.',
      labelNames: QUEUE_LABELS,
      buckets: [...WORKQUEUE_DURATION_BUCKETS],
      registers,
    }),
    retries: new Counter({
      name: WORKQUEUE_METRIC_NAMES.retries,
      help: 'Total number of retries handled by workqueue',
      labelNames: QUEUE_LABELS,
      registers,
    }),
    inProgressByQueue,
  };
  new Gauge({
    name: WORKQUEUE_METRIC_NAMES.unfinishedWork,
    help:
      "How many seconds of work has been done that is in progress and hasn't been observed by " +
      'work_duration. Large values indicate stuck threads. One can deduce the number of stuck ' +
      'threads by observing the rate at which this increases.',
    labelNames: QUEUE_LABELS,
    registers,
    collect() {
      for (const [queueName, metrics] of inProgressByQueue) {
        this.set({ name: queueName, controller: queueName }, metrics.unfinishedWorkSeconds());
      }
    },
  });
  new Gauge({
    name: WORKQUEUE_METRIC_NAMES.longestRunningProcessor,
    help: 'How many seconds has the longest running processor for workqueue been running.',
    labelNames: QUEUE_LABELS,
    registers,
    collect() {
      for (const [queueName, metrics] of inProgressByQueue) {
        this.set({ name: queueName, controller: queueName }, metrics.longestRunningProcessorSeconds());
      }
    },
  });
  registered.set(registry, families);
  return families;
}
