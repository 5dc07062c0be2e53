import { readFileSync } from 'node:fs';
import { httpGet } from '../../e2e/support/http.ts';

/** Wall-clock time (ms since the epoch) at which a process of this machine started. */
export function processStartedAt(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const startTicks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  const uptimeSeconds = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  return Date.now() - (uptimeSeconds - startTicks / 100) * 1000;
}

export interface OperatorStartup {
  /** Process start to every cache synced (/readyz answers 200). */
  cachesSyncedMs: number;
  /** Process start to the first reconcile finished (controller_runtime_reconcile_total > 0). */
  firstReconcileMs: number;
}

/**
 * Times a freshly started operator by polling its health and metrics endpoints every 20 ms: the
 * caches sync before the lease is needed, and its predecessor released the lease on SIGTERM.
 */
export async function operatorStartup(
  startedAt: number,
  ports: { health: number; metrics: number },
  timeoutMs = 300_000,
): Promise<OperatorStartup> {
  const deadline = startedAt + timeoutMs;
  const poll = async (what: string, done: () => Promise<boolean>) => {
    for (;;) {
      if (await done().catch(() => false)) return Date.now() - startedAt;
      if (Date.now() > deadline) throw new Error(`the restarted operator: no ${what} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const cachesSyncedMs = await poll(
    'cache sync',
    async () => (await httpGet(ports.health, '/readyz')).status === 200,
  );
  const firstReconcileMs = await poll('reconcile', async () => {
    const { body } = await httpGet(ports.metrics, '/metrics');
    return body
      .split('\n')
      .some(
        (l) =>
          l.startsWith('controller_runtime_reconcile_total{') && Number(l.slice(l.lastIndexOf(' ') + 1)) > 0,
      );
  });
  return { cachesSyncedMs, firstReconcileMs };
}

export interface KcmStartup {
  /** Process start to its leader lease (a killed predecessor's lease must expire first). */
  leaseMs: number;
  /** Lease to every informer its controllers wait for synced. */
  cachesSyncedAfterLeaseMs: number;
}

/**
 * kube-controller-manager's start, from its log (klog, -v=0): it starts its informers once it leads,
 * logs "Waiting for caches to sync" for each controller's informers and "Caches are synced" for each
 * when done, so its caches are synced at the line that makes the two counts equal.
 */
export async function kcmStartup(
  logFile: string,
  pid: number,
  startedAt: number,
  timeoutMs = 300_000,
): Promise<KcmStartup> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lines = readFileSync(logFile, 'utf8').split('\n');
    const found = kcmStartupFromLog(lines, pid, startedAt);
    // Controllers start their informers within about a second of the lease: the counts must hold
    // for a few seconds after the last sync.
    if (found && Date.now() - (startedAt + found.leaseMs + found.cachesSyncedAfterLeaseMs) > 3000)
      return found;
    if (Date.now() > deadline)
      throw new Error(`kube-controller-manager: caches not synced within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The start figures of process `pid` from kube-controller-manager's log lines, once its caches synced. */
export function kcmStartupFromLog(lines: string[], pid: number, startedAt: number): KcmStartup | undefined {
  // klog's header names the process: "I1124 03:26:14.406634   15107 file.go:1] ...".
  const ofThisProcess = new RegExp(`^[IWEF]\\d{4} [\\d:.]+\\s+${pid} `);
  const own = lines.filter((l) => ofThisProcess.test(l));
  const lease = own.find((l) => l.includes('"Successfully acquired lease"'));
  let waiting = 0;
  let synced = 0;
  let syncedAt: number | undefined;
  for (const line of own) {
    if (line.includes('"Waiting for caches to sync"')) waiting++;
    if (line.includes('"Caches are synced"') && ++synced === waiting) syncedAt = klogTime(line);
  }
  if (!lease || syncedAt === undefined || synced !== waiting) return undefined;
  const leaseAt = klogTime(lease);
  return { leaseMs: leaseAt - startedAt, cachesSyncedAfterLeaseMs: syncedAt - leaseAt };
}

/** "I1124 03:26:14.406634 ..." (klog, local time, no year) as ms since the epoch. */
function klogTime(line: string): number {
  const m = /^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})/.exec(line);
  if (!m) throw new Error(`not a klog line: ${line.slice(0, 80)}`);
  const [, month, day, h, min, s, us] = m.map(Number) as number[];
  return new Date(new Date().getFullYear(), month! - 1, day, h, min, s, us! / 1000).getTime();
}
