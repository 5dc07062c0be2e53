import type { OutgoingHttpHeaders } from 'node:http';
import type { RequestOptions } from 'node:https';
import type { RbacV1Subject, V1PolicyRule, V1Role, V1RoleBinding } from '@kubernetes/client-node';
import { testKubeConfig } from '../../e2e/support/cluster.ts';
import type { ClusterAccess } from '../../src/runtime/client/cluster-access.ts';
import { KubeClient } from '../../src/runtime/client/kube-client.ts';
import { resourceOf } from '../../src/runtime/client/resource.ts';

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

const ROLE = resourceOf<V1Role>()({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'Role',
  plural: 'roles',
  namespaced: true,
});
const ROLE_BINDING = resourceOf<V1RoleBinding>()({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'RoleBinding',
  plural: 'rolebindings',
  namespaced: true,
});

/** An RBAC subject for the user an impersonating client acts as. */
export const userSubject = (user: string): RbacV1Subject => ({
  apiGroup: 'rbac.authorization.k8s.io',
  kind: 'User',
  name: user,
});

/**
 * Grants `rules` in `namespace` to `subjects`: a Role and a RoleBinding, both named `name`. The
 * authorizer sees them a moment later: retry the subjects' first request.
 */
export async function grantRole(
  admin: KubeClient,
  namespace: string,
  name: string,
  rules: V1PolicyRule[],
  subjects: RbacV1Subject[],
): Promise<void> {
  await admin.create(ROLE, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name, namespace },
    rules,
  });
  await admin.create(ROLE_BINDING, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects,
  });
}
