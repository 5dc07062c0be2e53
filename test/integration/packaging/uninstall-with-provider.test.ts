import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type RunResult, run } from '../../../e2e/providers/exec.ts';
import type { ClusterInfo } from '../../../e2e/providers/provider.ts';
import { testClient, testCluster } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CHART_DIR, REPO_ROOT } from '../../unit/packaging/manifests.ts';

/**
 * `helm uninstall` next to a provider of the Machine contract. A provider ships a ClusterRole
 * labelled infra.basicoperator.dev/aggregate-to-manager, which the operator's aggregated ClusterRole
 * picks up. kube-controller-manager's clusterrole-aggregation controller writes an aggregated role's
 * rules by server-side apply, which creates the object when it is gone: if a role the aggregated one
 * selects is deleted at the same moment as the aggregated role (as an uninstall deletes them), the
 * controller may re-create the aggregated role just after its deletion, with the provider's rules.
 * The uninstall must still remove every ClusterRole of the release (and `--wait` must return).
 */

const PROVIDER_ROLE = join(
  REPO_ROOT,
  'examples',
  'statefulset-provider',
  'rbac',
  'machine_controller_role.yaml',
);
/** The race is a matter of milliseconds: a few rounds make a pass by luck unlikely. */
const ROUNDS = 3;

describe('helm uninstall with a provider role aggregated into the manager role', () => {
  let client: KubeClient;
  let cluster: ClusterInfo;
  let ns: string;

  const kubectl = (args: string[]): Promise<RunResult> =>
    run(cluster.kubectl, ['--kubeconfig', cluster.kubeconfig, ...args], { timeoutMs: 120_000 });
  const helm = (args: string[]): Promise<RunResult> =>
    run(cluster.helm, ['--kubeconfig', cluster.kubeconfig, ...args], { timeoutMs: 120_000 });
  const ok = (result: RunResult, what: string): string => {
    assert.equal(result.code, 0, `${what} failed:\n${result.stderr}${result.stdout}`);
    return result.stdout;
  };

  before(async () => {
    client = await testClient();
    cluster = await testCluster();
    ns = await createNamespace(client, 'uninstall-provider');
    // The example provider's role for the operator (other tests on the cluster apply the same one).
    ok(await kubectl(['apply', '-f', PROVIDER_ROLE]), 'kubectl apply the provider role');
  });
  after(async () => {
    // A ClusterRole left by a failed round would outlive the namespace: remove it.
    const roles = await kubectl(['get', 'clusterroles', '-o', 'name']);
    const left = roles.stdout
      .split('\n')
      .filter((r) => r.startsWith(`clusterrole.rbac.authorization.k8s.io/${ns}-`));
    if (left.length > 0) await kubectl(['delete', ...left, '--ignore-not-found']);
    await deleteNamespace(client, ns);
  });

  it(`removes every ClusterRole of the release, ${ROUNDS} installs and uninstalls in a row`, async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      const release = `${ns}-${round}`;
      ok(
        await helm([
          'install',
          release,
          CHART_DIR,
          '--namespace',
          ns,
          '--skip-crds',
          '--set',
          `watchNamespaces={${ns}}`,
          '--set',
          `leaderElection.id=${release}.basicoperator.dev`,
        ]),
        `helm install (round ${round})`,
      );
      const rolesOf = async () =>
        ok(await kubectl(['get', 'clusterroles', '-o', 'name']), 'kubectl get clusterroles')
          .split('\n')
          .filter((name) => name.startsWith(`clusterrole.rbac.authorization.k8s.io/${release}-`));
      // The aggregation controller has filled the rules in (the provider's among them).
      const manager = `${release}-basic-operator-manager`;
      ok(
        await kubectl([
          'wait',
          `clusterrole/${manager}`,
          '--for=jsonpath={.rules[0].verbs[0]}',
          '--timeout=30s',
        ]),
        'rules aggregated',
      );
      assert.ok((await rolesOf()).length > 0, 'the release made ClusterRoles');
      ok(
        await helm(['uninstall', release, '--namespace', ns, '--wait', '--timeout', '45s']),
        `helm uninstall --wait (round ${round})`,
      );
      // A re-created role would appear within the aggregation controller's reaction time.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      assert.deepEqual(
        await rolesOf(),
        [],
        `ClusterRoles of ${release} left after the uninstall (round ${round})`,
      );
    }
  });
});
