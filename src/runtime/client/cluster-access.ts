import type { RequestOptions } from 'node:https';

/**
 * What a KubeClient needs of a kubeconfig: where the API server is, and the TLS options and
 * credentials of the next requests. @kubernetes/client-node's KubeConfig has this shape, so a test
 * may pass one; the operator passes what loadKubeConfig() returns.
 */
export interface ClusterAccess {
  getCurrentCluster(): { readonly server: string } | null;
  /**
   * Sets `ca`, `cert`, `key`, `rejectUnauthorized`, `servername`, `headers` (Authorization,
   * Impersonate-User) and `auth` (user:password) on `opts`. Called again every minute and after a
   * 401, so rotated tokens and certificates on disk are picked up.
   */
  applyToHTTPSOptions(opts: RequestOptions): Promise<void>;
}
