// A local control plane a parity session has to itself, because it kills kube-controller-manager:
// brought up, held under a lock for the session, and stopped after. Two sessions on one such
// cluster would kill each other's kube-controller-manager and stop the cluster under each other.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stopAllComponents } from '../../e2e/providers/local/components.ts';
import { LocalProvider } from '../../e2e/providers/local/index.ts';
import { kwokWorkdir } from '../../e2e/providers/local/paths.ts';
import type { ClusterInfo } from '../../e2e/providers/provider.ts';

const WAIT_MS = 15 * 60_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Takes `dir` as a lock (mkdir is atomic), taking over one whose holder has exited. */
function tryLock(dir: string): number | undefined {
  try {
    mkdirSync(dir);
    writeFileSync(join(dir, 'pid'), String(process.pid));
    return undefined;
  } catch {
    const holder = Number.parseInt(readFileSync(join(dir, 'pid'), { encoding: 'utf8', flag: 'a+' }), 10);
    if (Number.isInteger(holder) ? alive(holder) : Date.now() - statSync(dir).mtimeMs < 10_000) {
      return holder; // NaN: just taken, its pid not written yet
    }
    rmSync(dir, { recursive: true, force: true });
    return tryLock(dir);
  }
}

/** Runs `session` on cluster `name`, alone: waits (15 min at most) for another session to end. */
export async function withOwnCluster<T>(
  name: string,
  session: (cluster: ClusterInfo) => Promise<T>,
  log: (line: string) => void = () => {},
): Promise<T> {
  // Beside the cluster's folder, not in it: up() deletes that folder when it recreates the cluster.
  mkdirSync(kwokWorkdir(), { recursive: true });
  const lock = join(kwokWorkdir(), `parity-session-${name}.lock`);
  const deadline = Date.now() + WAIT_MS;
  for (let said = false; ; said = true) {
    const holder = tryLock(lock);
    if (holder === undefined) break;
    if (Date.now() > deadline) {
      throw new Error(`another parity session (pid ${holder}) has held cluster ${name} for 15 minutes`);
    }
    if (!said) log(`waiting for the parity session of pid ${holder}, which uses cluster ${name}`);
    await new Promise((r) => setTimeout(r, 2000));
  }
  try {
    return await session(await new LocalProvider(name).up());
  } finally {
    await stopAllComponents(name);
    rmSync(lock, { recursive: true, force: true });
  }
}
