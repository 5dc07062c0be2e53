import { selectProvider } from '../../providers/index.ts';
import type { ClusterInfo } from '../../providers/provider.ts';
import { releaseAndSay } from '../../support/abandoned-namespaces.ts';

let cleared: Promise<void> | undefined;

/**
 * The cluster `npm test` brought up (BASIC_OPERATOR_TEST_CLUSTER), or, when the suite runs on its
 * own (`npm run e2e`), the one of E2E_PROVIDER, brought up now; once per process, with the
 * namespaces earlier runs abandoned released (releaseAbandonedNamespaces).
 */
export async function e2eCluster(): Promise<ClusterInfo> {
  const fromEnv = process.env.BASIC_OPERATOR_TEST_CLUSTER;
  const info = fromEnv ? (JSON.parse(fromEnv) as ClusterInfo) : await selectProvider().up();
  cleared ??= releaseAndSay(info, '[e2e]');
  await cleared;
  return info;
}
