import { selectProvider } from '../../providers/index.ts';
import type { ClusterInfo } from '../../providers/provider.ts';

/**
 * The cluster `npm test` brought up (BASIC_OPERATOR_TEST_CLUSTER), or, when the suite runs on its
 * own (`npm run e2e`), the one of E2E_PROVIDER, brought up now.
 */
export async function e2eCluster(): Promise<ClusterInfo> {
  const fromEnv = process.env.BASIC_OPERATOR_TEST_CLUSTER;
  return fromEnv ? (JSON.parse(fromEnv) as ClusterInfo) : selectProvider().up();
}
