import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runOk } from '../exec.ts';
import { CLUSTER_NAME, clusterDir, kwokWorkdir } from './paths.ts';
import { toolchainPaths } from './toolchain.ts';

/**
 * Direct control over the local control plane's processes, for tests that need failures a real
 * cluster has: an API server restart, or etcd compacting away the history a watch depends on.
 */
export type Component =
  | 'kube-apiserver'
  | 'etcd'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kwok-controller';

/** The pid the cluster recorded for the component; throws when it has none. */
export function pidOf(component: Component, cluster = CLUSTER_NAME): number {
  return Number(readFileSync(join(clusterDir(cluster), 'pids', `${component}.pid`), 'utf8').trim());
}

export function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

/** Running, and not a zombie: a killed component whose parent has not reaped it yet counts as stopped. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Kills a component (SIGKILL, as a crash would), runs `whileDown`, then has kwokctl start whatever
 * is not running. Components that died meanwhile (kube-controller-manager exits when it cannot renew
 * its lease) come back too.
 */
export async function restartComponent(
  cluster: string,
  component: Component,
  whileDown: () => Promise<void> = async () => {},
): Promise<void> {
  const pid = pidOf(component, cluster);
  hold(cluster, component);
  try {
    process.kill(pid, 'SIGKILL');
    await waitUntil(() => !exists(pid), 120_000, `${component} to stop`);
    await whileDown();
    await startStoppedComponents(cluster);
  } finally {
    release(cluster, component);
  }
}

/**
 * A component stopped on purpose is held: a file naming the process that stopped it, so the
 * supervisor (supervisor.ts) does not start it again behind that process's back.
 */
function holdFile(cluster: string, component: Component): string {
  return join(clusterDir(cluster), 'held', component);
}

function hold(cluster: string, component: Component): void {
  mkdirSync(join(clusterDir(cluster), 'held'), { recursive: true });
  writeFileSync(holdFile(cluster, component), String(process.pid));
}

function release(cluster: string, component: Component): void {
  rmSync(holdFile(cluster, component), { force: true });
}

/** The components held down by a process that still runs (a hold left by a dead process lapses). */
export function heldComponents(cluster = CLUSTER_NAME): Component[] {
  return COMPONENTS.filter((c) => {
    try {
      return alive(Number(readFileSync(holdFile(cluster, c), 'utf8').trim()));
    } catch {
      return false;
    }
  });
}

export const COMPONENTS: Component[] = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kwok-controller',
];

/**
 * Stops every component with SIGTERM, clients of the API server first and etcd last, and waits
 * until each has exited (`kwokctl stop cluster` signals them and returns at once, so a start right
 * after it can find the old processes still holding their ports).
 */
export async function stopAllComponents(cluster = CLUSTER_NAME): Promise<void> {
  // Held while they go one by one, so the supervisor takes no half-stopped cluster for a crash.
  try {
    for (const component of [...COMPONENTS].reverse()) {
      let pid: number;
      try {
        pid = pidOf(component, cluster);
      } catch {
        continue;
      }
      if (!ours(pid, component, cluster)) continue;
      hold(cluster, component);
      process.kill(pid, 'SIGTERM');
      await waitUntil(() => !exists(pid), 120_000, `${component} to stop`);
    }
  } finally {
    for (const component of COMPONENTS) release(cluster, component);
  }
}

/**
 * The pid runs this cluster's own binary of the component. A stale pid file may name a pid the
 * system has since given to another program, even to another cluster's component of the same name
 * (each cluster runs its components from its own bin/ folder).
 */
function ours(pid: number, component: Component, cluster: string): boolean {
  try {
    return alive(pid) && commandLine(pid)[0] === join(clusterDir(cluster), 'bin', component);
  } catch {
    return false;
  }
}

export function stoppedComponents(cluster = CLUSTER_NAME): Component[] {
  return COMPONENTS.filter((c) => {
    try {
      return !ours(pidOf(c, cluster), c, cluster);
    } catch {
      return true;
    }
  });
}

/** The local clusters with at least one of their components running. */
export function runningClusters(): string[] {
  let clusters: string[];
  try {
    clusters = readdirSync(join(kwokWorkdir(), 'clusters'));
  } catch {
    return [];
  }
  return clusters.filter((cluster) => stoppedComponents(cluster).length < COMPONENTS.length);
}

/**
 * kwokctl takes any live process with a component's recorded pid for that component and does not
 * start it: a pid file naming someone else's process is removed first.
 */
export function forgetStalePidFiles(cluster = CLUSTER_NAME): void {
  for (const c of COMPONENTS) {
    let pid: number;
    try {
      pid = pidOf(c, cluster);
    } catch {
      continue;
    }
    if (alive(pid) && !ours(pid, c, cluster)) {
      rmSync(join(clusterDir(cluster), 'pids', `${c}.pid`), { force: true });
    }
  }
}

/** The pid still names a process, possibly a zombie its parent has not reaped yet. */
function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * `kwokctl start cluster` starts only the components that are not running; it counts an unreaped
 * zombie as running, so this first waits for killed components to be reaped.
 */
export async function startStoppedComponents(cluster = CLUSTER_NAME): Promise<void> {
  const stopped = stoppedComponents(cluster);
  if (stopped.length === 0) return;
  const zombies = stopped.flatMap((c) => {
    try {
      const pid = pidOf(c, cluster);
      return exists(pid) && !alive(pid) ? [pid] : [];
    } catch {
      return [];
    }
  });
  await waitUntil(() => zombies.every((pid) => !exists(pid)), 120_000, 'killed components to be reaped');
  forgetStalePidFiles(cluster);
  await runOk(toolchainPaths().kwokctl, ['--name', cluster, 'start', 'cluster'], {
    env: { KWOK_WORKDIR: kwokWorkdir() },
  });
}

export function etcdEndpoint(cluster = CLUSTER_NAME): string {
  const flag = commandLine(pidOf('kube-apiserver', cluster)).find((a) => a.startsWith('--etcd-servers='));
  if (!flag) throw new Error('cannot find --etcd-servers on the kube-apiserver command line');
  return flag.slice('--etcd-servers='.length);
}

export function etcdctl(args: string[], endpoint = etcdEndpoint()): Promise<string> {
  return runOk(toolchainPaths().etcdctl, [`--endpoints=${endpoint}`, ...args], { env: { ETCDCTL_API: '3' } });
}

/** Compacts etcd up to its current revision: every older resourceVersion becomes 410 Gone. */
export async function compactEtcd(endpoint = etcdEndpoint()): Promise<number> {
  const status = JSON.parse(await etcdctl(['endpoint', 'status', '-w', 'json'], endpoint)) as Array<{
    Status: { header: { revision: number } };
  }>;
  const revision = status[0]!.Status.header.revision;
  await etcdctl(['compact', String(revision), '--physical'], endpoint);
  return revision;
}
