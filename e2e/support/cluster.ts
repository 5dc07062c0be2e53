import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../src/runtime/client/kube-client.ts';
import { selectProvider } from '../providers/index.ts';
import type { ClusterInfo } from '../providers/provider.ts';

let cached: Promise<ClusterInfo> | undefined;

/** The test cluster: the one `npm test` brought up, or (when a test file runs alone) brought up now. */
export function testCluster(): Promise<ClusterInfo> {
  if (!cached) {
    const fromEnv = process.env.BASIC_OPERATOR_TEST_CLUSTER;
    cached = fromEnv ? Promise.resolve(JSON.parse(fromEnv) as ClusterInfo) : selectProvider().up();
  }
  return cached;
}

export async function testKubeConfig(): Promise<KubeConfig> {
  const info = await testCluster();
  const kc = new KubeConfig();
  kc.loadFromFile(info.kubeconfig);
  return kc;
}

export async function testClient(): Promise<KubeClient> {
  return new KubeClient(await testKubeConfig(), { userAgent: 'basic-operator-tests' });
}
