// The chart's ValidatingAdmissionPolicies (docs/install.md, "Admission policy") in the test
// cluster: rendered for one test file's namespaces, installed, waited for and removed again.
import type {
  V1ValidatingAdmissionPolicy,
  V1ValidatingAdmissionPolicyBinding,
} from '@kubernetes/client-node';
import { waitFor } from '../../../e2e/support/wait.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { resourceOf } from '../../../src/runtime/client/resource.ts';
import type { Manifest } from '../../unit/packaging/manifests.ts';
import { renderChart } from './helm.ts';

export const POLICY = resourceOf<V1ValidatingAdmissionPolicy>()({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'ValidatingAdmissionPolicy',
  plural: 'validatingadmissionpolicies',
  namespaced: false,
});
export const BINDING = resourceOf<V1ValidatingAdmissionPolicyBinding>()({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  plural: 'validatingadmissionpolicybindings',
  namespaced: false,
});

/** The chart's policies, by the suffix of their names (basic-operator-<policy>). */
export const POLICIES = [
  'machine-backups',
  'backup-claims',
  'standalone-backups',
  'backup-restores',
] as const;

export type PolicyManifest = Manifest & V1ValidatingAdmissionPolicy;
export type BindingManifest = Manifest & V1ValidatingAdmissionPolicyBinding;

export const policies = (manifests: Manifest[]) =>
  manifests.filter((m): m is PolicyManifest => m.kind === 'ValidatingAdmissionPolicy');
export const bindings = (manifests: Manifest[]) =>
  manifests.filter((m): m is BindingManifest => m.kind === 'ValidatingAdmissionPolicyBinding');

/**
 * The chart's policies and bindings, released as `release` into `namespace` with ServiceAccount
 * `operatorServiceAccount` of that namespace as the operator's, and bound in `watchNamespaces` only,
 * so that other test files running beside this one never meet them.
 */
export async function renderPolicies(
  release: string,
  namespace: string,
  operatorServiceAccount: string,
  watchNamespaces: string[],
): Promise<Manifest[]> {
  const rendered = await renderChart({
    release,
    namespace,
    set: [
      'serviceAccount.create=false',
      `serviceAccount.name=${operatorServiceAccount}`,
      `watchNamespaces={${watchNamespaces.join(',')}}`,
    ],
  });
  return [...policies(rendered), ...bindings(rendered)];
}

/** Creates the rendered policies, then their bindings; returns what it created. */
export async function installPolicies(admin: KubeClient, rendered: Manifest[]): Promise<KubeObject[]> {
  const installed: KubeObject[] = [];
  for (const policy of policies(rendered)) installed.push(await admin.create(POLICY, policy));
  for (const binding of bindings(rendered)) installed.push(await admin.create(BINDING, binding));
  return installed;
}

/**
 * Deletes what installPolicies created, bindings first. Cluster-scoped: call it before deleting the
 * namespaces, whose deletion they would otherwise govern.
 */
export async function uninstallPolicies(admin: KubeClient, installed: KubeObject[]): Promise<void> {
  for (const obj of [...installed].reverse()) {
    const type = obj.kind === BINDING.kind ? BINDING : POLICY;
    await admin.delete(type, undefined, obj.metadata?.name ?? '').catch(() => undefined);
  }
}

/**
 * The denial of `request` (a dry-run write: nothing is stored) by a ValidatingAdmissionPolicy,
 * retried until one denies it: a policy, and a user's Role, take a moment to reach the API server's
 * admission chain and authorizer. Any other answer (RBAC's 403, an admission) is retried too.
 */
export function policyDenial(what: string, request: () => Promise<unknown>): Promise<ApiError> {
  return waitFor(
    what,
    async () => {
      try {
        await request();
      } catch (err) {
        if (err instanceof ApiError && /ValidatingAdmissionPolicy/.test(err.message)) return err;
        throw err;
      }
      return false;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
}
