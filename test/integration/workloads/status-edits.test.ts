// A status written by someone else through /status is corrected at once, as kube-controller-manager
// corrects a Deployment's or ReplicaSet's (it syncs on every update of its kind). Found by porting
// Kubernetes' e2e case deployment.go:187 (test/integration/upstream-e2e): our controllers are woken
// by their own kind only on a spec or annotation change, so a hand-written status stayed until some
// other event came. Here nothing else happens after the edit: only the edit can wake them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  BASIC_DEPLOYMENT,
  BASIC_REPLICA_SET,
  type BasicDeployment,
  type BasicReplicaSet,
} from '../../../src/apis/index.ts';
import { registerControllers } from '../../../src/controllers/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import type { ResourceType } from '../../../src/runtime/client/resource.ts';
import { OPERATOR_DEFAULTS } from '../../support/operator-options.ts';
import { type OperatorSuite, startOperatorSuite, stopOperatorSuite } from '../../support/suite.ts';

const template = (app: string) => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
});

describe('a status edited by hand', () => {
  let suite: OperatorSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    suite = await startOperatorSuite('status-edits', (m) => registerControllers(m, OPERATOR_DEFAULTS));
    ({ client, ns } = suite);
  });
  after(() => stopOperatorSuite(suite));

  type Workload = BasicDeployment | BasicReplicaSet;

  async function editedAndRestored(type: ResourceType<Workload>, name: string): Promise<void> {
    const settled = await waitFor(`${type.kind} ${name} to have 2 available replicas`, async () => {
      const w = await client.get<Workload>(type, ns, name);
      return w.status?.availableReplicas === 2 && w.status.observedGeneration === w.metadata.generation
        ? w
        : undefined;
    });
    const edited = await client.patch<Workload>(type, {
      namespace: ns,
      name,
      patchType: 'merge',
      subresource: 'status',
      body: { status: { readyReplicas: 0, availableReplicas: 0 } },
    });
    assert.equal(edited.status?.availableReplicas, 0, 'the edit landed');
    assert.equal(edited.metadata.generation, settled.metadata.generation, 'no spec change to wake anyone');
    await waitFor(
      `${type.kind} ${name}'s controller to write the real counts back`,
      async () => {
        const w = await client.get<Workload>(type, ns, name);
        return w.status?.availableReplicas === 2 && w.status.readyReplicas === 2;
      },
      { timeoutMs: 30_000 },
    );
  }

  it('BasicDeployment: its controller writes the real counts back', async () => {
    await client.create<BasicDeployment>(BASIC_DEPLOYMENT, {
      apiVersion: BASIC_DEPLOYMENT.apiVersion,
      kind: BASIC_DEPLOYMENT.kind,
      metadata: { name: 'edited', namespace: ns },
      spec: { replicas: 2, selector: { matchLabels: { app: 'edited' } }, template: template('edited') },
    });
    await editedAndRestored(BASIC_DEPLOYMENT as ResourceType<Workload>, 'edited');
  });

  it('BasicReplicaSet: its controller writes the real counts back', async () => {
    await client.create<BasicReplicaSet>(BASIC_REPLICA_SET, {
      apiVersion: BASIC_REPLICA_SET.apiVersion,
      kind: BASIC_REPLICA_SET.kind,
      metadata: { name: 'edited-set', namespace: ns },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'edited-set' } },
        template: template('edited-set'),
      },
    });
    await editedAndRestored(BASIC_REPLICA_SET as ResourceType<Workload>, 'edited-set');
  });
});
