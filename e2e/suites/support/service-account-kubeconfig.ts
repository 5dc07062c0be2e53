import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';

/**
 * A kubeconfig (as JSON) with the server and CA of `adminKubeconfig` and `token` (a ServiceAccount's)
 * as its user, so a process started with it has exactly that ServiceAccount's rights.
 */
export function serviceAccountKubeconfig(
  adminKubeconfig: string,
  user: string,
  token: string,
  namespace?: string,
): string {
  const admin = new KubeConfig();
  admin.loadFromFile(adminKubeconfig);
  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error(`${adminKubeconfig} has no current cluster`);
  const caData =
    cluster.caData ?? (cluster.caFile ? readFileSync(cluster.caFile).toString('base64') : undefined);
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'e2e',
        cluster: {
          server: cluster.server,
          ...(caData ? { 'certificate-authority-data': caData } : {}),
          ...(cluster.skipTLSVerify ? { 'insecure-skip-tls-verify': true } : {}),
        },
      },
    ],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: 'e2e', context: { cluster: 'e2e', user, ...(namespace ? { namespace } : {}) } }],
    'current-context': 'e2e',
  };
  return JSON.stringify(config, null, 2);
}
