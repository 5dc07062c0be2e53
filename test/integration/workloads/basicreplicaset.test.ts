import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import {
  BASIC_REPLICA_SET,
  type BasicReplicaSet,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
} from '../../../src/apis/index.ts';
import { registerBasicReplicaSetController } from '../../../src/controllers/basicreplicaset/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { type OperatorSuite, startOperatorSuite, stopOperatorSuite } from '../../support/suite.ts';
import { waitFor } from '../../support/wait.ts';

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
      assert.equal(pod.metadata?.labels?.[MANAGED_BY_LABEL], MANAGED_BY_VALUE);
      assert.equal(pod.metadata?.ownerReferences?.[0]?.kind, 'BasicReplicaSet');
      assert.equal(pod.metadata?.ownerReferences?.[0]?.controller, true);
    }

    await client.patch(
      BASIC_REPLICA_SET,
      ns,
      'web',
      'merge',
      { spec: { replicas: 6 } },
      { subresource: 'scale' },
    );
    await settled('web', 6);
    await client.patch(BASIC_REPLICA_SET, ns, 'web', 'merge', { spec: { replicas: 2 } });
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
      metadata: {
        name: 'orphan',
        namespace: ns,
        labels: { app: 'adopt', [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
      },
      spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
    });
    // Were the set reconciled before the manager's cache saw the orphan, it would create two pods,
    // then adopt the orphan and delete one of three, which may be the orphan.
    const podCache = suite!.manager.cache.informerFor<V1Pod>(CoreTypes.Pod);
    await waitFor('the orphan in the manager cache', async () => podCache.get(ns, 'orphan'));
    await client.create(BASIC_REPLICA_SET, replicaSet(ns, 'adopt', 2));
    await settled('adopt', 2);
    const orphan = await client.get<V1Pod>(CoreTypes.Pod, ns, 'orphan');
    assert.equal(orphan.metadata?.ownerReferences?.[0]?.name, 'adopt', 'the orphan was adopted');

    await client.patch(CoreTypes.Pod, ns, 'orphan', 'merge', { metadata: { labels: { app: 'other' } } });
    await waitFor('the pod to be released', async () => {
      const pod = await client.get<V1Pod>(CoreTypes.Pod, ns, 'orphan');
      return (pod.metadata?.ownerReferences ?? []).length === 0;
    });
    await settled('adopt', 2);
  });

  it('counts a ready pod as available only after minReadySeconds, requeueing itself', async () => {
    const rs = replicaSet(ns, 'slow', 2);
    // Long enough that a stalled test process still sees the ready-but-not-available status.
    rs.spec.minReadySeconds = 8;
    await client.create(BASIC_REPLICA_SET, rs);
    const ready = await waitFor('2 ready pods', async () => {
      const s = await status('slow');
      return s?.readyReplicas === 2 ? s : undefined;
    });
    assert.ok((ready.availableReplicas ?? 0) < 2, 'not yet available when just ready');
    await waitFor('2 available pods', async () => (await status('slow'))?.availableReplicas === 2, {
      timeoutMs: 40_000,
    });
    const availableAt = Date.now();
    // Ready transitions are recorded with one-second precision.
    const readySince = Math.max(
      ...(await pods('slow')).map((p) =>
        Date.parse(String(p.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime)),
      ),
    );
    assert.ok(
      availableAt - readySince >= 7000,
      `available ${availableAt - readySince} ms after ready (minReadySeconds 8)`,
    );
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
