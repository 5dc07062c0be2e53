// `kubectl basic` on BasicDeployments made to be stuck on purpose: a rollout held by pods that never
// become Ready, and a set whose pod creates a ResourceQuota refuses. The operator's controllers run
// in-process; the plugin runs as its own process with the test cluster's kubeconfig.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NEVER_READY_ANNOTATION } from '../../../e2e/providers/local/kwok-stages.ts';
import { testCluster } from '../../../e2e/support/cluster.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import { BASIC_DEPLOYMENT, type BasicDeployment } from '../../../src/apis/index.ts';
import { registerControllers } from '../../../src/controllers/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { OPERATOR_DEFAULTS } from '../../support/operator-options.ts';
import { type OperatorSuite, startOperatorSuite, stopOperatorSuite } from '../../support/suite.ts';
import { createQuota } from '../machine/helpers.ts';
import { kubectlBasic, whyUntil } from './plugin.ts';

function deployment(
  namespace: string,
  name: string,
  replicas: number,
  annotations?: Record<string, string>,
): BasicDeployment {
  return {
    apiVersion: BASIC_DEPLOYMENT.apiVersion,
    kind: BASIC_DEPLOYMENT.kind,
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, ...(annotations ? { annotations } : {}) },
        spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      },
    },
  };
}

describe('kubectl basic on BasicDeployments', () => {
  let suite: OperatorSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    suite = await startOperatorSuite('kb-work', (m) => registerControllers(m, OPERATOR_DEFAULTS));
    ({ client, ns } = suite);
  });
  after(() => stopOperatorSuite(suite));

  it('tree and why of a Ready deployment; then a rollout held by a pod that never becomes Ready', async (t) => {
    if ((await testCluster()).provider !== 'local')
      return t.skip("never-ready pods need the local provider's kwok stage");
    await client.create(BASIC_DEPLOYMENT, deployment(ns, 'web', 2));
    const ready = await whyUntil(['bd/web', '-n', ns], /nothing blocks it: Ready/);
    assert.equal(ready.code, 0);
    assert.equal(ready.stdout.trim(), 'BasicDeployment/web: nothing blocks it: Ready');

    // Revision 2's pods run and never become Ready.
    await client.patch(BASIC_DEPLOYMENT, {
      namespace: ns,
      name: 'web',
      patchType: 'merge',
      body: { spec: { template: { metadata: { annotations: { [NEVER_READY_ANNOTATION]: 'true' } } } } },
    });
    const held = await whyUntil(['basicdeployments/web', '-n', ns], /never became Ready/);
    console.log(held.stdout);
    assert.equal(held.code, 1);
    assert.match(
      held.stdout,
      /^BasicDeployment\/web is blocked: Pod\/web-[a-z0-9]+-[a-z0-9]+ is Running but never became Ready/,
    );
    assert.match(held.stdout, /path: BasicDeployment\/web -> BasicReplicaSet\/web-[a-z0-9]+ -> Pod\//);
    assert.match(held.stdout, /condition Ready=False/);

    const tree = await kubectlBasic(['tree', 'bd/web', '-n', ns]);
    console.log(tree.stdout);
    assert.equal(tree.code, 0);
    const lines = tree.stdout.trim().split('\n');
    assert.match(lines[0] ?? '', /^NAME +READY +STATUS +REASON +AGE +REVISION$/);
    assert.match(lines[1] ?? '', /^BasicDeployment\/web +False /);
    // The newest set first, with its revision.
    assert.match(lines[2] ?? '', /^├─BasicReplicaSet\/web-\S+ +False .* 2$/);
    assert.ok(
      lines.some((l) => /^└─BasicReplicaSet\/web-\S+ +True .* 1$/.test(l)),
      'the old set, revision 1, Ready',
    );

    const json = await kubectlBasic(['tree', 'bd/web', '-n', ns, '-o', 'json']);
    const parsed = JSON.parse(json.stdout) as {
      items: Array<{ kind: string; children: Array<{ revision: string | null; children: unknown[] }> }>;
    };
    assert.equal(parsed.items[0]?.kind, 'BasicDeployment');
    assert.deepEqual(
      parsed.items[0]?.children.map((c) => c.revision),
      ['2', '1'],
    );

    const all = await kubectlBasic(['tree', 'bd', '-A']);
    assert.equal(all.code, 0);
    assert.ok(
      all.stdout.split('\n').some((l) => l.startsWith(`${ns} `) && l.includes('BasicDeployment/web')),
    );
  });

  it('a set whose pod creates a ResourceQuota refuses: the ReplicaFailure condition and the FailedCreate Event', async () => {
    await createQuota(client, ns, 'two-pods', { pods: '2' });
    // The other test's pods may hold the quota already: this deployment wants more than is left.
    await client.create(BASIC_DEPLOYMENT, deployment(ns, 'crowd', 4));
    const refused = await whyUntil(['bd/crowd', '-n', ns], /refused/);
    console.log(refused.stdout);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stdout,
      /^BasicDeployment\/crowd is blocked: BasicReplicaSet\/crowd-\S+: pod creates are refused \(a ResourceQuota\): .*exceeded quota: two-pods/,
    );
    assert.match(refused.stdout, /condition ReplicaFailure=True FailedCreate/);
    await waitFor('the FailedCreate Event in the evidence', async () => {
      const again = await kubectlBasic(['why', 'bd/crowd', '-n', ns]);
      // The Event's message is the condition's when both name the same refused pod: then it is
      // shown as "(the same message)".
      return /event Warning FailedCreate .*(exceeded quota|\(the same message\))/.test(again.stdout);
    });
  });
});
