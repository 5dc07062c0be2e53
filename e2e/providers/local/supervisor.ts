import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  COMPONENTS,
  type Component,
  heldComponents,
  startStoppedComponents,
  stoppedComponents,
} from './components.ts';
import { CLUSTER_NAME, clusterDir } from './paths.ts';

/**
 * What kubelet does for a real control plane's static pods, done for the local one while `npm test`
 * runs on it: a component that exits on its own is started again. kube-controller-manager and
 * kube-scheduler exit by design when they cannot renew their leader lease within 10 s, which happens
 * when etcd waits that long for the disk; without a restart every later test that needs a pod
 * scheduled or a StatefulSet's pod made fails. A component a test stopped on purpose
 * (restartComponent holds it) and a cluster stopped whole are left alone.
 */

/** Restarts of one component: how many since it last ran long enough, and when the last was. */
export interface RestartHistory {
  count: number;
  lastAt: number;
}

/** kubelet's crash-loop back-off: 10 s doubling to 5 min, forgotten after 10 min of running. */
export const BACKOFF_START_MS = 10_000;
export const BACKOFF_MAX_MS = 300_000;
export const BACKOFF_RESET_MS = 600_000;

export function nextRestartAllowedAt(history: RestartHistory | undefined): number {
  if (!history || history.count === 0) return 0;
  return history.lastAt + Math.min(BACKOFF_MAX_MS, BACKOFF_START_MS * 2 ** (history.count - 1));
}

/**
 * The stopped components to start now. None while every component is stopped (someone stopped the
 * cluster) or while any stopped one is held (starting the cluster starts every stopped component, so
 * it waits until the test that holds one starts them itself).
 */
export function componentsToStart(
  stopped: readonly Component[],
  held: readonly Component[],
  history: ReadonlyMap<Component, RestartHistory>,
  now: number,
): Component[] {
  if (stopped.length === COMPONENTS.length) return [];
  if (stopped.some((c) => held.includes(c))) return [];
  return stopped.filter((c) => now >= nextRestartAllowedAt(history.get(c)));
}

export interface ComponentExit {
  component: Component;
  /** When the supervisor found it stopped. */
  foundAt: Date;
  /** The end of its log: why it exited, when it said so. */
  lastLog: string;
}

export class ControlPlaneSupervisor {
  readonly exits: ComponentExit[] = [];
  private readonly history = new Map<Component, RestartHistory>();
  private timer: NodeJS.Timeout | undefined;
  private tick: Promise<void> = Promise.resolve();

  private readonly cluster: string;
  private readonly say: (line: string) => void;
  private readonly intervalMs: number;

  constructor(
    cluster = CLUSTER_NAME,
    say: (line: string) => void = (line) => process.stderr.write(`[local] ${line}\n`),
    intervalMs = 2000,
  ) {
    this.cluster = cluster;
    this.say = say;
    this.intervalMs = intervalMs;
  }

  start(): this {
    let checking = false;
    this.timer = setInterval(() => {
      if (checking) return; // one check at a time: a slow start is not queued behind itself
      checking = true;
      this.tick = this.check()
        .catch((err: unknown) => {
          this.say(`supervisor: ${err instanceof Error ? err.message : String(err)}`);
        })
        .finally(() => {
          checking = false;
        });
    }, this.intervalMs);
    return this;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.tick;
  }

  private async check(): Promise<void> {
    const now = Date.now();
    for (const [component, h] of this.history) {
      if (now - h.lastAt > BACKOFF_RESET_MS) this.history.delete(component);
    }
    const stopped = stoppedComponents(this.cluster);
    const start = componentsToStart(stopped, heldComponents(this.cluster), this.history, now);
    if (start.length === 0) return;
    for (const component of start) {
      const exit = { component, foundAt: new Date(now), lastLog: whyExited(this.cluster, component) };
      this.exits.push(exit);
      const h = this.history.get(component);
      this.history.set(component, { count: (h?.count ?? 0) + 1, lastAt: now });
      this.say(
        `${component} exited on its own; starting it again, as kubelet would. Its log ended: ${exit.lastLog}`,
      );
    }
    await startStoppedComponents(this.cluster);
  }
}

/** One line for the end of a run: which components exited on their own, and when. */
export function describeExits(exits: readonly ComponentExit[]): string {
  if (exits.length === 0) return 'no component exited on its own';
  const list = exits.map((e) => `${e.component} at ${e.foundAt.toISOString()}`).join(', ');
  return `started again after exiting on their own: ${list} (their logs say why, see the lines above)`;
}

/**
 * Why a component exited, from the end of its log: the line that says so (a lost leader lease, a
 * klog fatal line, a panic), else its last lines; at most 600 characters.
 */
export function exitReason(logEnd: string): string {
  if (logEnd.trim() === '') return 'its log is empty';
  const lines = logEnd.trimEnd().split('\n');
  const why = lines.findLast((l) => /leaderelection lost|^F\d{4} |^panic: |fatal error: /i.test(l));
  const text = why ?? lines.slice(-3).join(' | ');
  return text.length > 600 ? `${text.slice(0, 600)}...` : text;
}

/** Why a component exited, by the end of its log. */
export function whyExited(cluster: string, component: Component): string {
  const end = componentLogEnd(cluster, component);
  return end === undefined ? `(no log at ${logFile(cluster, component)})` : exitReason(end);
}

function logFile(cluster: string, component: Component): string {
  return join(clusterDir(cluster), 'logs', `${component}.log`);
}

/** The last `bytes` of a component's log (kwokctl starts each run of it with an empty one). */
export function componentLogEnd(cluster: string, component: Component, bytes = 65_536): string | undefined {
  const file = logFile(cluster, component);
  try {
    const size = statSync(file).size;
    const length = Math.min(size, bytes);
    const buffer = Buffer.alloc(length);
    const fd = openSync(file, 'r');
    try {
      readSync(fd, buffer, 0, length, size - length);
    } finally {
      closeSync(fd);
    }
    return buffer.toString('utf8');
  } catch {
    return undefined;
  }
}
