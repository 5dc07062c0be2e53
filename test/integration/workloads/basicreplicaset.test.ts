import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HttpMethod, type V1Pod } from '@kubernetes/client-node';
import { testClient } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  BASIC_DEPLOYMENT,
  BASIC_REPLICA_SET,
  type BasicDeployment,
  type BasicReplicaSet,
  MANAGED_BY_LABEL,
  POD_TEMPLATE_HASH_LABEL,
  REPLICA_SET_POD_LABEL,
} from '../../../src/apis/index.ts';
import { registerBasicDeploymentController } from '../../../src/controllers/basicdeployment/index.ts';
import {
  podInformers,
  registerBasicReplicaSetController,
} from '../../../src/controllers/basicreplicaset/index.ts';
import { isNamespaceTerminating, isNotFound } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes, objectPath } from '../../../src/runtime/client/resource.ts';
import { type OperatorSuite, startOperatorSuite, stopOperatorSuite } from '../../support/suite.ts';

const replicaSet = (namespace: string, name: string, replicas: number): BasicReplicaSet => ({
  apiVersion: BASIC_REPLICA_SET.apiVersion,
  kind: BASIC_REPLICA_SET.kind,
  metadata: { name, namespace },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
    },
  },
});

const PAUSE = 'registry.k8s.io/pause:3.10';
const HELM = { [MANAGED_BY_LABEL]: 'Helm' };

/** A pod made by hand: no owner. */
const handMadePod = (namespace: string, name: string, labels: Record<string, string>): V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace,
    labels,
    // The costliest pod to delete, so a set that adopts it deletes one of its own pods instead.
    annotations: { 'controller.kubernetes.io/pod-deletion-cost': '1000' },
  },
  spec: { containers: [{ name: 'app', image: PAUSE }] },
});

const isReady = (pod: V1Pod) =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/**
 * Waits until `app` has exactly `n` live pods, then checks for `holdMs` that it keeps them: fails at
 * once when more than `n` pods with the label exist at all (terminating or released ones included),
 * so a controller creating pods in a loop is caught within a poll, not after it flooded the cluster.
 */
async function expectSteadyPods(
  client: KubeClient,
  namespace: string,
  app: string,
  n: number,
  { settleMs = 60_000, holdMs = 10_000 } = {},
): Promise<V1Pod[]> {
  const deadline = Date.now() + settleMs;
  let holdingSince: number | undefined;
  for (;;) {
    const all = (await client.list<V1Pod>(CoreTypes.Pod, { namespace, labelSelector: `app=${app}` })).items;
    assert.ok(
      all.length <= n,
      `${all.length} pods labelled app=${app} exist, at most ${n} expected: ${all.map((p) => p.metadata?.name).join(', ')}`,
    );
    const live = all.filter((p) => !p.metadata?.deletionTimestamp && isReady(p));
    if (live.length === n) holdingSince ??= Date.now();
    else holdingSince = undefined;
    if (holdingSince !== undefined && Date.now() - holdingSince >= holdMs) return live;
    assert.ok(Date.now() < deadline, `${app} did not settle at ${n} ready pods (has ${live.length})`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('BasicReplicaSet controller', () => {
  let suite: OperatorSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    suite = await startOperatorSuite('brs', registerBasicReplicaSetController);
    ({ client, ns } = suite);
  });
  after(() => stopOperatorSuite(suite));

  const pods = async (app: string) =>
    (await client.list<V1Pod>(CoreTypes.Pod, { namespace: ns, labelSelector: `app=${app}` })).items.filter(
      (p) => !p.metadata?.deletionTimestamp,
    );
  const status = async (name: string) =>
    (await client.get<BasicReplicaSet>(BASIC_REPLICA_SET, ns, name)).status;
  const settled = (name: string, n: number) =>
    waitFor(`${name} to have ${n} available replicas`, async () => {
      const s = await status(name);
      const live = await pods(name);
      return s?.availableReplicas === n &&
        s.replicas === n &&
        live.length === n &&
        s.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
        ? s
        : undefined;
    });

  it('creates, scales up and down, and replaces a deleted pod', async () => {
    await client.create(BASIC_REPLICA_SET, replicaSet(ns, 'web', 3));
    const s = await settled('web', 3);
    assert.equal(s.activeReplicas, 3);
    assert.equal(s.readyReplicas, 3);
    assert.equal(s.selector, 'app=web');
    const created = await pods('web');
    for (const pod of created) {
      assert.deepEqual(pod.metadata?.labels, { app: 'web', [REPLICA_SET_POD_LABEL]: 'true' });
      assert.equal(pod.metadata?.ownerReferences?.[0]?.kind, 'BasicReplicaSet');
      assert.equal(pod.metadata?.ownerReferences?.[0]?.controller, true);
    }

    await client.patch(BASIC_REPLICA_SET, {
      namespace: ns,
      name: 'web',
      patchType: 'merge',
      body: { spec: { replicas: 6 } },
      subresource: 'scale',
    });
    await settled('web', 6);
    await client.patch(BASIC_REPLICA_SET, {
      namespace: ns,
      name: 'web',
      patchType: 'merge',
      body: { spec: { replicas: 2 } },
    });
    await settled('web', 2);

    const [victim] = await pods('web');
    await client.delete(CoreTypes.Pod, ns, victim!.metadata!.name!);
    await waitFor('the deleted pod to be replaced', async () => {
      const live = await pods('web');
      return live.length === 2 && !live.some((p) => p.metadata?.uid === victim!.metadata?.uid);
    });
    await settled('web', 2);
  });

  it('adopts a matching orphan and releases a pod that stops matching', async () => {
    await client.create<V1Pod>(CoreTypes.Pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'orphan', namespace: ns, labels: { app: 'adopt' } },
      spec: { containers: [{ name: 'app', image: PAUSE }] },
    });
    // Were the set reconciled before the manager's cache saw the orphan, it would create two pods,
    // then adopt the orphan and delete one of three, which may be the orphan.
    const otherPods = podInformers(suite!.manager).others;
    await waitFor('the orphan in the manager cache', async () => otherPods.get(ns, 'orphan'));
    await client.create(BASIC_REPLICA_SET, replicaSet(ns, 'adopt', 2));
    await settled('adopt', 2);
    const orphan = await client.get<V1Pod>(CoreTypes.Pod, ns, 'orphan');
    assert.equal(orphan.metadata?.ownerReferences?.[0]?.name, 'adopt', 'the orphan was adopted');
    assert.deepEqual(orphan.metadata?.labels, { app: 'adopt', [REPLICA_SET_POD_LABEL]: 'true' });

    await client.patch(CoreTypes.Pod, {
      namespace: ns,
      name: 'orphan',
      patchType: 'merge',
      body: { metadata: { labels: { app: 'other' } } },
    });
    const released = await waitFor('the pod to be released', async () => {
      const pod = await client.get<V1Pod>(CoreTypes.Pod, ns, 'orphan');
      return (pod.metadata?.ownerReferences ?? []).length === 0 ? pod : undefined;
    });
    assert.deepEqual(released.metadata?.labels, { app: 'other' }, 'our marker goes with the reference');
    await settled('adopt', 2);
  });

  it("refuses a template or selector that uses the operator's pod marker label", async () => {
    const inTemplate = replicaSet(ns, 'marker', 1);
    inTemplate.spec.template.metadata!.labels![REPLICA_SET_POD_LABEL] = 'true';
    await assert.rejects(client.create(BASIC_REPLICA_SET, inTemplate), /replicaset-pod is reserved/);
    const inSelector = replicaSet(ns, 'marker', 1);
    inSelector.spec.selector.matchExpressions = [{ key: REPLICA_SET_POD_LABEL, operator: 'DoesNotExist' }];
    await assert.rejects(client.create(BASIC_REPLICA_SET, inSelector), /must not use the label/);
  });

  it('keeps exactly replicas pods whose selector and template say app.kubernetes.io/managed-by: Helm', async () => {
    const rs = replicaSet(ns, 'helm', 3);
    rs.spec.selector = { matchLabels: { app: 'helm', ...HELM } };
    rs.spec.template.metadata = { labels: { app: 'helm', ...HELM } };
    await client.create(BASIC_REPLICA_SET, rs);
    const live = await expectSteadyPods(client, ns, 'helm', 3);
    for (const pod of live) {
      assert.deepEqual(pod.metadata?.labels, { app: 'helm', ...HELM, [REPLICA_SET_POD_LABEL]: 'true' });
    }
    const s = await settled('helm', 3);
    assert.equal(s.replicas, 3);
  });

  it('marks its pod again when someone removes the marker label, instead of losing sight of it', async () => {
    await client.create(BASIC_REPLICA_SET, replicaSet(ns, 'unmarked', 3));
    await settled('unmarked', 3);
    const [pod] = await pods('unmarked');
    const name = pod!.metadata!.name!;
    // Without the marker the pod leaves the controller's pod cache (it is the same when upgrading
    // from a version that did not set it); a set that did not look for it would create a fourth pod.
    await client.patch(CoreTypes.Pod, {
      namespace: ns,
      name,
      patchType: 'json',
      body: [{ op: 'remove', path: `/metadata/labels/${REPLICA_SET_POD_LABEL.replace('/', '~1')}` }],
    });
    await waitFor('the marker to be back', async () => {
      const p = await client.get<V1Pod>(CoreTypes.Pod, ns, name);
      return p.metadata?.labels?.[REPLICA_SET_POD_LABEL] === 'true';
    });
    const live = await expectSteadyPods(client, ns, 'unmarked', 3, { holdMs: 3000 });
    assert.ok(
      live.some((p) => p.metadata?.name === name),
      'the same pod is kept',
    );
  });

  it('counts terminating pods in status.terminatingReplicas, not in status.replicas', async () => {
    const HOLD = 'test.basicoperator.dev/hold';
    await client.create(BASIC_REPLICA_SET, replicaSet(ns, 'term', 3));
    await settled('term', 3);
    const held = await pods('term');
    try {
      for (const pod of held) {
        await client.patch(CoreTypes.Pod, {
          namespace: ns,
          name: pod.metadata!.name!,
          patchType: 'merge',
          body: {
            metadata: { finalizers: [HOLD] },
          },
        });
      }
      await client.patch(BASIC_REPLICA_SET, {
        namespace: ns,
        name: 'term',
        patchType: 'merge',
        body: { spec: { replicas: 1 } },
      });
      const s = await waitFor('two pods terminating and the set counting one active pod', async () => {
        const all = (await client.list<V1Pod>(CoreTypes.Pod, { namespace: ns, labelSelector: 'app=term' }))
          .items;
        const terminating = all.filter((p) => p.metadata?.deletionTimestamp).length;
        const st = await status('term');
        return terminating === 2 && st?.activeReplicas === 1 && st.availableReplicas === 1 ? st : undefined;
      });
      assert.equal(s.replicas, 1, 'status.replicas counts active pods only');
      assert.equal(s.terminatingReplicas, 2);
      const scale = await client.request<{ status?: { replicas?: number } }>(
        HttpMethod.GET,
        objectPath(BASIC_REPLICA_SET, ns, 'term', 'scale'),
      );
      assert.equal(scale.status?.replicas, 1, 'the scale subresource (and an HPA) sees one replica');
    } finally {
      for (const pod of held) {
        await client
          .patch(CoreTypes.Pod, {
            namespace: ns,
            name: pod.metadata!.name!,
            patchType: 'merge',
            body: { metadata: { finalizers: null } },
          })
          .catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          });
      }
    }
    const done = await waitFor('the terminating pods to go', async () => {
      const st = await status('term');
      return st?.terminatingReplicas === 0 && st.replicas === 1 ? st : undefined;
    });
    assert.equal(done.activeReplicas, 1);
  });
});

describe('BasicReplicaSet pods of a BasicDeployment', () => {
  let suite: OperatorSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    suite = await startOperatorSuite('brs-bd', (manager) => {
      registerBasicDeploymentController(manager);
      registerBasicReplicaSetController(manager);
    });
    ({ client, ns } = suite);
  });
  after(() => stopOperatorSuite(suite));

  it('keeps exactly replicas pods whose selector and template say app.kubernetes.io/managed-by: Helm', async () => {
    const labels = { app: 'helm-bd', ...HELM };
    const d: BasicDeployment = {
      apiVersion: BASIC_DEPLOYMENT.apiVersion,
      kind: BASIC_DEPLOYMENT.kind,
      metadata: { name: 'helm-bd', namespace: ns },
      spec: {
        replicas: 3,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: PAUSE }] } },
      },
    };
    await client.create(BASIC_DEPLOYMENT, d);
    const live = await expectSteadyPods(client, ns, 'helm-bd', 3);
    for (const pod of live) {
      const { [POD_TEMPLATE_HASH_LABEL]: hash, ...rest } = pod.metadata?.labels ?? {};
      assert.ok(hash, 'pods carry the pod-template-hash');
      assert.deepEqual(rest, { ...labels, [REPLICA_SET_POD_LABEL]: 'true' });
    }
  });
});

describe('BasicReplicaSet controller when the API server refuses pods', () => {
  let suite: OperatorSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    suite = await startOperatorSuite('brs-quota', registerBasicReplicaSetController);
    ({ client, ns } = suite);
  });
  after(() => stopOperatorSuite(suite));

  it('reports ReplicaFailure while a ResourceQuota refuses pods, and recovers once it is gone', async () => {
    await client.create(CoreTypes.ResourceQuota, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'two-pods', namespace: ns },
      spec: { hard: { pods: '2' } },
    });
    await waitFor('the quota to be counted', async () => {
      const q = await client.get<{ status?: { used?: Record<string, string> } } & { metadata?: object }>(
        CoreTypes.ResourceQuota,
        ns,
        'two-pods',
      );
      return q.status?.used?.pods !== undefined;
    });
    await client.create(BASIC_REPLICA_SET, replicaSet(ns, 'quota', 4));
    const status = async () => (await client.get<BasicReplicaSet>(BASIC_REPLICA_SET, ns, 'quota')).status;
    const failed = await waitFor('ReplicaFailure=True', async () => {
      const c = (await status())?.conditions?.find((x) => x.type === 'ReplicaFailure');
      return c?.status === 'True' ? c : undefined;
    });
    assert.equal(failed.reason, 'FailedCreate');
    assert.match(failed.message, /exceeded quota/);
    assert.equal((await status())?.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
    await client.delete(CoreTypes.ResourceQuota, ns, 'two-pods');
    await waitFor(
      'ReplicaFailure to clear once pods can be created',
      async () => {
        const s = await status();
        return s?.availableReplicas === 4 && !s.conditions?.some((c) => c.type === 'ReplicaFailure');
      },
      { timeoutMs: 60_000 },
    );
  });
});

describe('pods in a namespace being deleted', () => {
  it('are refused with the cause the controller treats as "nothing to report"', async () => {
    // The set skips FailedCreate (event and condition) for this refusal, as upstream does: the set is
    // about to go with its namespace. This pins the classification to what the API server sends.
    const client = await testClient();
    const ns = await createNamespace(client, 'brs-nsterm');
    const HOLD = 'test.basicoperator.dev/hold';
    await client.create(CoreTypes.ConfigMap, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'hold', namespace: ns, finalizers: [HOLD] },
    });
    try {
      await deleteNamespace(client, ns);
      await waitFor('the namespace to be terminating', async () => {
        const n = await client.get<{ status?: { phase?: string } } & { metadata?: object }>(
          CoreTypes.Namespace,
          undefined,
          ns,
        );
        return n.status?.phase === 'Terminating';
      });
      const refusal = await client.create(CoreTypes.Pod, handMadePod(ns, 'late', { app: 'late' })).then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.ok(refusal, 'the pod was refused');
      assert.equal(isNamespaceTerminating(refusal), true, String(refusal));
      assert.equal(isNamespaceTerminating(new Error('forbidden')), false);
    } finally {
      await client
        .patch(CoreTypes.ConfigMap, {
          namespace: ns,
          name: 'hold',
          patchType: 'merge',
          body: { metadata: { finalizers: null } },
        })
        .catch(() => undefined);
    }
  });
});
