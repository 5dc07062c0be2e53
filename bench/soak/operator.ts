import { freePort, type LogLine, type OperatorProcess } from '../../e2e/support/operator-process.ts';
import { sleep } from '../async.ts';
import type { MeasuredCluster } from '../cluster.ts';
import { log } from '../log.ts';
import type { MemoryCgroup } from '../measure/memory-cgroup.ts';
import { labelledSamples } from '../measure/prometheus-text.ts';
import { type OperatorSettings, startOperator } from '../sides/operator.ts';

/** One reading of the operator's /metrics: its reconcile counters per controller and namespace, and its memory. */
export interface MetricsSample {
  at: number;
  /**
   * basic_operator_reconciles_total by controller, then by the reconciled objects' namespace: every
   * result, and `result="error"`. Counters of the process read: they start again from 0 after a restart.
   */
  reconciles: Record<string, Record<string, number>>;
  errors: Record<string, Record<string, number>>;
  /** Items waiting in each controller's work queue. */
  depth: Record<string, number>;
  heapUsedBytes: number;
  heapTotalBytes: number;
  rssBytes: number;
}

/** A reconcile that failed (its warn or error line), or a status write that did. */
export interface FailureLine {
  at: number;
  controller: string;
  namespace: string;
  name: string;
  message: 'reconcile failed' | 'status write failed';
  /** The error's first characters. */
  error: string;
}

export interface OperatorFigures {
  /** Exits the soak did not ask for, each restarted as the kubelet would. */
  restarts: number;
  exits: string[];
  peakRssMiB: number;
  peakHeapUsedMiB: number;
  peakHeapTotalMiB: number;
  memoryLimitMiB: number | undefined;
  /** The cgroup's peak use and the times it hit its limit, when the operator ran in one. */
  cgroupPeakMiB: number | undefined;
  cgroupLimitHits: number | undefined;
  /** The operator's own requests answered 422, by method (rest_client_requests_total, every process added up). */
  requests422: Record<string, number>;
}

const RECONCILE_FAILED = new Set([
  'reconcile failed, will retry',
  'reconcile failed permanently',
  'reconcile panicked',
]);
const STATUS_WRITE_FAILED = 'status write failed, will retry';
const MiB = 1048576;

/**
 * The operator for the whole soak, as its own process (run as the benchmark runs it: dist/main.js,
 * the image's Node flags, the chart's memory limit): restarted if it exits, as the kubelet would, and
 * each exit counted; its /metrics read every `sampleMs`; its failed reconciles and status writes taken
 * from its log lines (which also name the object and the error). Only the last lines are kept.
 */
export class SoakOperator {
  readonly samples: MetricsSample[] = [];
  readonly failures: FailureLine[] = [];
  private readonly exits: string[] = [];
  private readonly requests422 = new Map<string, number>();
  private process: OperatorProcess | undefined;
  private stopping = false;
  private peakRssKiB = 0;
  private sampler: Promise<void> | undefined;
  /** Processes stopped on purpose (a change of namespaces): their exits are not restarts. */
  private readonly replaced = new Set<OperatorProcess>();
  private readonly cluster: MeasuredCluster;
  private namespaces: readonly string[];
  private readonly leaseNamespace: string;
  private readonly settings: OperatorSettings;
  private readonly cgroup: MemoryCgroup | undefined;
  private readonly sampleMs: number;
  private ports = { metrics: 0, health: 0, inspector: 0 };

  constructor(
    cluster: MeasuredCluster,
    watch: { namespaces: readonly string[]; leaseNamespace: string },
    settings: OperatorSettings,
    sampleMs = 1000,
  ) {
    this.cluster = cluster;
    this.namespaces = watch.namespaces;
    this.leaseNamespace = watch.leaseNamespace;
    this.settings = settings;
    this.cgroup = settings.cgroup;
    this.sampleMs = sampleMs;
  }

  get pid(): number | undefined {
    return this.process?.child.pid;
  }

  /** Starts it and waits for its caches to sync; from then on its metrics are read. */
  async start(): Promise<void> {
    this.ports = { metrics: await freePort(), health: await freePort(), inspector: await freePort() };
    this.cgroup?.resetPeak();
    await this.launch();
    this.sampler = this.sample();
  }

  private async launch(): Promise<void> {
    const operator = startOperator(
      this.cluster,
      {
        namespaces: this.namespaces,
        leaseNamespace: this.leaseNamespace,
        retainLines: 200,
        onLine: (line) => this.read(line),
      },
      this.ports,
      this.settings,
    );
    this.process = operator;
    void operator.exited.then((exit) => {
      if (this.stopping || this.replaced.has(operator)) return;
      const oom = exit.signal === 'SIGKILL' && (this.cgroup?.failures() ?? 0) > 0;
      const what = `exited (${exit.signal ?? `code ${exit.code}`})${oom ? ' at its memory limit' : ''}`;
      this.exits.push(`${new Date().toISOString()} ${what}`);
      log(`the operator ${what}; starting it again, as the kubelet would\n${operator.describe(10)}`);
      void this.launch().catch((err: unknown) => log(`the operator did not start again: ${String(err)}`));
    });
    await operator.waitForHttp('ready, its caches synced', this.ports.health, '/readyz', 120_000);
  }

  /**
   * Stops it and starts it again watching `namespaces` instead, as a change of the chart's
   * `watchNamespaces` would (a new pod); waits for its caches to sync. Not counted as a restart.
   */
  async watchOnly(namespaces: readonly string[]): Promise<void> {
    const old = this.process;
    if (old) {
      this.replaced.add(old);
      await old.stop({ graceMs: 30_000 });
    }
    this.namespaces = namespaces;
    await this.launch();
  }

  private read(line: LogLine): void {
    const failed = RECONCILE_FAILED.has(line.message);
    if (!failed && line.message !== STATUS_WRITE_FAILED) return;
    const key = typeof line.key === 'string' ? line.key.split('/') : [];
    this.failures.push({
      at: Date.now(),
      controller: String(line.controller ?? ''),
      namespace: String(line.namespace ?? key[0] ?? ''),
      name: String(line.name ?? key[1] ?? ''),
      message: failed ? 'reconcile failed' : 'status write failed',
      error: String(line.error ?? '').slice(0, 300),
    });
  }

  private async sample(): Promise<void> {
    let last422 = new Map<string, number>();
    while (!this.stopping) {
      const pid = this.pid;
      try {
        const text = await this.metrics();
        const sample: MetricsSample = {
          at: Date.now(),
          reconciles: {},
          errors: {},
          depth: {},
          heapUsedBytes: unlabelled(text, 'nodejs_heap_size_used_bytes'),
          heapTotalBytes: unlabelled(text, 'nodejs_heap_size_total_bytes'),
          rssBytes: unlabelled(text, 'process_resident_memory_bytes'),
        };
        const now422 = new Map<string, number>();
        for (const { metric, labels, value } of labelledSamples(text, [
          'basic_operator_reconciles_total',
          'rest_client_requests_total',
          'workqueue_depth',
        ])) {
          if (metric === 'workqueue_depth') {
            sample.depth[labels.name ?? ''] = value;
            continue;
          }
          if (metric === 'rest_client_requests_total') {
            if (labels.code === '422')
              now422.set(labels.method ?? '', (now422.get(labels.method ?? '') ?? 0) + value);
            continue;
          }
          const controller = labels.controller ?? '';
          const namespace = labels.object_namespace ?? '';
          add(sample.reconciles, controller, namespace, value);
          if (labels.result === 'error') add(sample.errors, controller, namespace, value);
        }
        // A counter lower than before is a new process's: what the old one counted stays counted.
        for (const [method, n] of now422) {
          const before = last422.get(method) ?? 0;
          this.requests422.set(method, (this.requests422.get(method) ?? 0) + (n >= before ? n - before : n));
        }
        last422 = now422;
        this.samples.push(sample);
        if (pid) this.peakRssKiB = Math.max(this.peakRssKiB, this.process?.stats().rssPeakKiB ?? 0);
      } catch {
        // restarting, or between two processes: the next reading counts
      }
      await sleep(this.sampleMs);
    }
  }

  /** Its /metrics now. */
  async metrics(): Promise<string> {
    return (await fetch(`http://127.0.0.1:${this.ports.metrics}/metrics`)).text();
  }

  /** The deepest each work queue was at a reading between `from` and `to`. */
  deepestQueues(from: number, to: number): Record<string, number> {
    const deepest: Record<string, number> = {};
    for (const s of this.samples) {
      if (s.at < from || s.at > to) continue;
      for (const [queue, n] of Object.entries(s.depth)) deepest[queue] = Math.max(deepest[queue] ?? 0, n);
    }
    return deepest;
  }

  /** Stops it (SIGTERM) and returns what was seen of it over the whole soak. */
  async stop(): Promise<OperatorFigures> {
    this.stopping = true;
    await this.sampler;
    await this.process?.stop({ graceMs: 30_000 });
    const max = (pick: (s: MetricsSample) => number) => Math.max(0, ...this.samples.map(pick)) / MiB;
    return {
      restarts: this.exits.length,
      exits: this.exits,
      peakRssMiB: Math.max(
        this.peakRssKiB / 1024,
        max((s) => s.rssBytes),
      ),
      peakHeapUsedMiB: max((s) => s.heapUsedBytes),
      peakHeapTotalMiB: max((s) => s.heapTotalBytes),
      memoryLimitMiB: this.settings.memoryLimit === undefined ? undefined : this.settings.memoryLimit / MiB,
      cgroupPeakMiB: this.cgroup ? this.cgroup.peakBytes() / MiB : undefined,
      cgroupLimitHits: this.cgroup?.failures(),
      requests422: Object.fromEntries(this.requests422),
    };
  }
}

function add(
  counts: MetricsSample['reconciles'],
  controller: string,
  namespace: string,
  value: number,
): void {
  const byNamespace = counts[controller] ?? {};
  byNamespace[namespace] = (byNamespace[namespace] ?? 0) + value;
  counts[controller] = byNamespace;
}

/** The value of an unlabelled sample (`name 123`), or NaN. */
function unlabelled(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined
    ? Number.NaN
    : Number(
        line
          .slice(name.length + 1)
          .trim()
          .split(' ')[0],
      );
}
