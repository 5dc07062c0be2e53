// A local control plane a parity session has to itself, because it kills kube-controller-manager:
// brought up, held under a lock for the session, and stopped after. Two sessions on one such
// cluster would kill each other's kube-controller-manager and stop the cluster under each other.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { stopAllComponents } from '../../e2e/providers/local/components.ts';
import { LocalProvider } from '../../e2e/providers/local/index.ts';
import { withFileLock } from '../../e2e/providers/local/lock.ts';
import { kwokWorkdir } from '../../e2e/providers/local/paths.ts';
import type { ClusterInfo } from '../../e2e/providers/provider.ts';

const WAIT_MS = 15 * 60_000;

/** Runs `session` on cluster `name`, alone: waits (15 min at most) for another session to end. */
export async function withOwnCluster<T>(
  name: string,
  session: (cluster: ClusterInfo) => Promise<T>,
  log: (line: string) => void = () => {},
): Promise<T> {
  // Beside the cluster's folder, not in it: up() deletes that folder when it recreates the cluster.
  const lock = join(kwokWorkdir(), `parity-session-${name}.lock`);
  if (existsSync(lock)) log(`waiting for another parity session, which uses cluster ${name} (${lock})`);
  return withFileLock(lock, WAIT_MS, async () => {
    try {
      return await session(await new LocalProvider(name).up());
    } finally {
      await stopAllComponents(name);
    }
  });
}
