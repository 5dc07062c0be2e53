import { procStats } from '../../e2e/support/operator-process.ts';
import { cpuSpent, type MeasuredCluster, requestDelta } from '../cluster.ts';

/** What the machine did up to one moment: CPU ticks per process, the API server's requests by kind. */
export interface LoadReading {
  at: number;
  ticks: Map<string, number>;
  requests: Map<string, number>;
}

/** A phase's load on the machine: CPU seconds per process, and the API requests it made most of. */
export interface PhaseLoad {
  seconds: number;
  /** CPU seconds per process over the phase (the control plane's, the operator's, the webhook's, the soak's). */
  cpuSeconds: Record<string, number>;
  /** The API server's requests over the phase by "VERB resource[/subresource]", most first (all users). */
  requests: Array<readonly [string, number]>;
}

/** The processes besides the control plane whose CPU a phase counts, by name: their pids now. */
export type OtherProcesses = () => Record<string, number | undefined>;

/**
 * Reads the machine's load at one moment: the control plane's processes, the soak itself and the
 * other processes named (operator, webhook), and the API server's request counts.
 */
export async function readLoad(cluster: MeasuredCluster, others: OtherProcesses): Promise<LoadReading> {
  const ticks = cluster.machineTicks();
  for (const [name, pid] of Object.entries(others())) {
    if (pid === undefined) continue;
    try {
      ticks.set(name, procStats(pid).cpuTicks);
    } catch {
      // gone between the two readings: no figure
    }
  }
  return { at: Date.now(), ticks, requests: await cluster.apiRequestCounts() };
}

/** The load between two readings; requests fewer than `minRequests` are left out. */
export function loadBetween(before: LoadReading, after: LoadReading, minRequests = 20): PhaseLoad {
  return {
    seconds: (after.at - before.at) / 1000,
    cpuSeconds: cpuSpent(before.ticks, after.ticks) ?? {},
    requests: requestDelta(before.requests, after.requests, /./, minRequests).toSorted((x, y) => y[1] - x[1]),
  };
}

/**
 * Phase `letter`'s load in two lines: CPU per process, most first ("kube-apiserver 12.3 s (41%), ...",
 * shares of the phase's wall time), then the API server's eight most frequent requests per second.
 */
export function describeLoad(letter: string, load: PhaseLoad): string[] {
  const cpu = Object.entries(load.cpuSeconds)
    .toSorted((x, y) => y[1] - x[1])
    .map(([name, s]) => `${name} ${s.toFixed(1)} s (${((100 * s) / load.seconds).toFixed(0)}%)`);
  const top = load.requests.slice(0, 8).map(([key, n]) => `${key} ${(n / load.seconds).toFixed(1)}`);
  return [
    `CPU over ${letter}'s rollout (${load.seconds.toFixed(0)} s): ${cpu.join(', ')}`,
    `  API requests per second over it, most first: ${top.join(', ') || 'none'}`,
  ];
}
