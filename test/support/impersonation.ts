import type { OutgoingHttpHeaders } from 'node:http';
import type { RequestOptions } from 'node:https';
import { testKubeConfig } from '../../e2e/support/cluster.ts';
import type { ClusterAccess } from '../../src/runtime/client/cluster-access.ts';
import { KubeClient } from '../../src/runtime/client/kube-client.ts';

/**
 * The test cluster's admin credentials with an Impersonate-User header: requests are authorized
 * and admitted as `user`. For a ServiceAccount's username (`system:serviceaccount:<ns>:<name>`) the
 * API server adds the ServiceAccount's groups itself when no Impersonate-Group header is sent.
 */
class Impersonating implements ClusterAccess {
  private readonly base: ClusterAccess;
  private readonly user: string;

  constructor(base: ClusterAccess, user: string) {
    this.base = base;
    this.user = user;
  }

  getCurrentCluster(): { readonly server: string } | null {
    return this.base.getCurrentCluster();
  }

  async applyToHTTPSOptions(opts: RequestOptions): Promise<void> {
    await this.base.applyToHTTPSOptions(opts);
    const headers: OutgoingHttpHeaders = { 'Impersonate-User': this.user };
    opts.headers = Array.isArray(opts.headers) ? headers : { ...opts.headers, ...headers };
  }
}

/** A client of the test cluster acting as `user` (the kubeconfig's admin may impersonate anyone). */
export async function impersonatingClient(user: string): Promise<KubeClient> {
  return new KubeClient(new Impersonating(await testKubeConfig(), user), {
    userAgent: 'basic-operator-tests',
  });
}
