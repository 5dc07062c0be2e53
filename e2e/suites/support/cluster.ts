import { selectProvider } from '../../providers/index.ts';
import type { ClusterInfo } from '../../providers/provider.ts';
import { releaseAndSay } from '../../support/abandoned-namespaces.ts';

let broughtUp: Promise<ClusterInfo> | undefined;

/**
 * The cluster `npm test` brought up (BASIC_OPERATOR_TEST_CLUSTER; it released the namespaces earlier
 * runs abandoned before the run), or, when the suite runs on its own (`npm run e2e`), the one of
 * E2E_PROVIDER, brought up now and those namespaces released, once per process.
 */
export async function e2eCluster(): Promise<ClusterInfo> {
  const fromEnv = process.env.BASIC_OPERATOR_TEST_CLUSTER;
  if (fromEnv) return JSON.parse(fromEnv) as ClusterInfo;
  broughtUp ??= selectProvider()
    .up()
    .then(async (info) => {
      await releaseAndSay(info, '[e2e]');
      return info;
    });
  return broughtUp;
}
