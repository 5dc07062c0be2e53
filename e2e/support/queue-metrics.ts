import { httpGet } from './http.ts';
import { find, parseMetrics, type Sample } from './prometheus-text.ts';
import { waitFor } from './wait.ts';

/** What a manager's /metrics say about one controller's work queue and reconciles. */
export interface QueueReading {
  /** workqueue_adds_total: keys that entered the queue. */
  adds: number;
  /** workqueue_depth: keys waiting for a worker. */
  depth: number;
  /** controller_runtime_active_workers: reconciles running now. */
  active: number;
  /** controller_runtime_reconcile_total{result="success"}. */
  successes: number;
  /**
   * workqueue_retries_total: delayed adds (a requeue, requeueAfter, a failed reconcile or status
   * write). Unchanged since a reading means nothing was scheduled to come back since then.
   */
  retries: number;
}

export async function readQueue(metricsPort: number, controller: string): Promise<QueueReading> {
  const { status, body } = await httpGet(metricsPort, '/metrics');
  if (status !== 200) throw new Error(`GET /metrics answered ${status}: ${body}`);
  return queueReading(parseMetrics(body), controller);
}

/** The reading of `controller` in samples already scraped. */
export function queueReading(samples: Sample[], controller: string): QueueReading {
  const sum = (name: string, labels: Record<string, string>) =>
    find(samples, name, labels).reduce((total, sample) => total + sample.value, 0);
  return {
    adds: sum('workqueue_adds_total', { name: controller }),
    depth: sum('workqueue_depth', { name: controller }),
    active: sum('controller_runtime_active_workers', { controller }),
    successes: sum('controller_runtime_reconcile_total', { controller, result: 'success' }),
    retries: sum('workqueue_retries_total', { name: controller }),
  };
}

/** Waits until the queue reading satisfies `done`; a timeout shows the last reading. */
export function waitForQueue(
  metricsPort: number,
  controller: string,
  what: string,
  done: (reading: QueueReading) => boolean,
  timeoutMs = 30_000,
): Promise<QueueReading> {
  return waitFor(
    `controller ${controller}: ${what}`,
    async () => {
      const reading = await readQueue(metricsPort, controller);
      if (done(reading)) return reading;
      throw new Error(`queue now ${JSON.stringify(reading)}`);
    },
    { timeoutMs, intervalMs: 100 },
  );
}

/**
 * Waits until `controller` took a key in after `before` was read, reconciled it with success, and
 * has nothing queued or running: it has acted on the cluster as it was at `before`, so a negative
 * checked afterwards (nothing deleted, no finalizer removed) cannot pass just because it was early.
 */
export function waitForQueueSettled(
  metricsPort: number,
  controller: string,
  before: QueueReading,
  timeoutMs = 30_000,
): Promise<QueueReading> {
  return waitForQueue(
    metricsPort,
    controller,
    `a new reconcile succeeded and nothing is queued or running (before: ${JSON.stringify(before)})`,
    (now) =>
      now.adds > before.adds && now.successes > before.successes && now.depth === 0 && now.active === 0,
    timeoutMs,
  );
}
