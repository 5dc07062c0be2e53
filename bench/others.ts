import { KIND_CLUSTER, KindProvider } from '../e2e/providers/kind/index.ts';
import { runningClusters } from '../e2e/providers/local/components.ts';
import { LocalProvider } from '../e2e/providers/local/index.ts';
import type { ClusterProvider } from '../e2e/providers/provider.ts';
import { log } from './log.ts';

/**
 * Nothing else of the project runs beside the cluster measured: the project's other running clusters
 * (local ones with a component running, and the kind cluster) stop the run with one line naming
 * them, unless `allow` (their load is then in the figures, and said so).
 */
export async function refuseOtherClusters(provider: ClusterProvider, allow: boolean): Promise<void> {
  const measuredLocal = provider instanceof LocalProvider ? provider.cluster : undefined;
  const others = [
    ...runningClusters()
      .filter((cluster) => cluster !== measuredLocal)
      .map((cluster) => `local ${cluster}`),
    ...(provider.name !== 'kind' && (await new KindProvider().running()) ? [`kind ${KIND_CLUSTER}`] : []),
  ];
  if (others.length === 0) return;
  const running = `the project's other clusters are running beside the one measured: ${others.join(', ')}`;
  if (!allow) {
    log(`${running}; stop them, or pass --allow-others to measure anyway`);
    process.exit(2);
  }
  log(`${running} (--allow-others: their load skews the figures)`);
}
