// The StatefulSetMachine provider's life against the local control plane, run as its own process
// with its own RBAC and Lease: kube-controller-manager's StatefulSet controller makes the pod and
// the claims (bound to pre-provisioned volumes), kwok runs the pod. Ready with the contract's fields,
// the stop handshake, deletion through the garbage collector.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Lease, V1PersistentVolumeClaim, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { testClient } from '../../../e2e/support/cluster.ts';
import { httpGet } from '../../../e2e/support/http.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import type { OperatorProcess } from '../../../e2e/support/operator-process.ts';
import { sleep, waitFor } from '../../../e2e/support/wait.ts';
import {
  STATEFULSET_MACHINE,
  type StatefulSetMachine,
} from '../../../examples/statefulset-provider/src/api.ts';
import { LEASE_NAME } from '../../../examples/statefulset-provider/src/flags.ts';
import { STATEFUL_SET } from '../../../examples/statefulset-provider/src/statefulset.ts';
import { isViolation, readInfrastructure, STOP_REQUESTED_ANNOTATION } from '../../../src/apis/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes, type ResourceType } from '../../../src/runtime/client/resource.ts';
import {
  getLive,
  installProvider,
  PROVIDER_NAMESPACE,
  readyReason,
  startProvider,
  statefulSetMachine,
  waitForMachine,
} from './provider.ts';

interface EventLike {
  metadata?: object;
  reason?: string;
  reportingController?: string;
  regarding?: { kind?: string; name?: string };
}

const LEASE = {
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
} as ResourceType<V1Lease>;

describe('StatefulSetMachine provider: lifecycle', () => {
  let client: KubeClient;
  let ns = '';
  let provider: OperatorProcess | undefined;

  before(async () => {
    await installProvider(10);
    client = await testClient();
    ns = await createNamespace(client, 'stsm-life');
    provider = await startProvider(ns, ['--leader-elect']);
  });
  after(async () => {
    await provider?.stop();
    if (ns) await deleteNamespace(client, ns);
  });

  const claim = (name: string) =>
    getLive(() => client.get<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim, ns, name));
  const set = (name: string) => getLive(() => client.get<V1StatefulSet>(STATEFUL_SET, ns, name));
  const pod = (name: string) => getLive(() => client.get<V1Pod>(CoreTypes.Pod, ns, name));

  it('runs as its own process: its own Lease, /readyz', async () => {
    const lease = await client.get(LEASE, PROVIDER_NAMESPACE, LEASE_NAME);
    assert.match(lease.spec?.holderIdentity ?? '', /_/);
    assert.ok(provider);
    const { health } = await provider.ports();
    assert.equal((await httpGet(health, '/readyz')).status, 200);
  });

  it('is Ready once kube-controller-manager made the pod and the claims are Bound, with the contract fields', async () => {
    await client.create(STATEFULSET_MACHINE, statefulSetMachine(ns, 'alpha'));
    const m = await waitForMachine(client, ns, 'alpha', 'ready', (x) => x.status?.ready === true);
    const ready = m.status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'True');
    assert.equal(ready?.observedGeneration, m.metadata.generation);
    assert.equal(m.status?.phase, 'Running');
    assert.equal(m.status?.providerID, `statefulset://${ns}/alpha`);
    assert.deepEqual(m.status?.volumes, [
      { name: 'data', claimName: 'data-alpha-0', phase: 'Bound' },
      { name: 'logs', claimName: 'logs-alpha-0', phase: 'Bound' },
    ]);
    const p = await pod('alpha-0');
    assert.ok(p?.status?.podIP, 'kwok gave the pod an IP');
    assert.deepEqual(m.status?.addresses, [{ type: 'InternalIP', address: p?.status?.podIP }]);
    assert.equal(m.status?.failureReason, undefined);

    // What the Machine controller reads of it, through the contract.
    const view = readInfrastructure({ ...m });
    assert.ok(!isViolation(view));
    assert.equal(view.ready, true);
    assert.equal(view.stopped, false);

    // What it is made of: a StatefulSet it controls; the pod and claims are the StatefulSet's.
    const s = await set('alpha');
    assert.equal(s?.metadata?.ownerReferences?.find((r) => r.controller)?.uid, m.metadata.uid);
    assert.equal(s?.spec?.replicas, 1);
    assert.deepEqual(s?.spec?.persistentVolumeClaimRetentionPolicy, {
      whenDeleted: 'Delete',
      whenScaled: 'Retain',
    });
    assert.equal(p?.metadata?.ownerReferences?.find((r) => r.controller)?.uid, s?.metadata?.uid);
    for (const name of ['data-alpha-0', 'logs-alpha-0']) {
      const c = await claim(name);
      assert.equal(c?.metadata?.ownerReferences?.find((r) => r.controller)?.uid, s?.metadata?.uid, name);
      assert.equal(c?.metadata?.labels?.['examples.basicoperator.dev/statefulset-machine'], 'alpha');
    }

    // Its Events, written with its own RBAC and name.
    const events = await waitFor('the Events about alpha', async () => {
      const list = await client.list<EventLike>(CoreTypes.Event, { namespace: ns });
      const about = list.items.filter(
        (e) => e.regarding?.kind === 'StatefulSetMachine' && e.regarding.name === 'alpha',
      );
      return about.some((e) => e.reason === 'Running') ? about : undefined;
    });
    assert.deepEqual(events.map((e) => e.reason).sort(), ['Running', 'StatefulSetCreated']);
    assert.equal(events[0]?.reportingController, 'examples.basicoperator.dev/statefulset-provider');
  });

  it('stops on request: 0 replicas, pod gone, claims kept, stopped reported, never scaled up again', async () => {
    await client.patch(STATEFULSET_MACHINE, {
      namespace: ns,
      name: 'alpha',
      patchType: 'merge',
      body: { metadata: { annotations: { [STOP_REQUESTED_ANNOTATION]: 'true' } } },
    });
    const m = await waitForMachine(client, ns, 'alpha', 'stopped', (x) => x.status?.stopped === true);
    assert.equal(await pod('alpha-0'), undefined, 'stopped is reported only once the pod is gone');
    assert.equal(m.status?.phase, 'Stopped');
    assert.equal(m.status?.ready, false);
    assert.equal(readyReason(m), 'Stopped');
    assert.deepEqual(
      m.status?.volumes?.map((v) => v.claimName),
      ['data-alpha-0', 'logs-alpha-0'],
    );
    for (const name of ['data-alpha-0', 'logs-alpha-0']) {
      const c = await claim(name);
      assert.equal(c?.status?.phase, 'Bound', `${name} kept`);
      assert.equal(c?.metadata?.deletionTimestamp, undefined);
    }
    await sleep(3000);
    assert.equal((await set('alpha'))?.spec?.replicas, 0);
    assert.equal(await pod('alpha-0'), undefined);
  });

  it('goes with its object: the garbage collector deletes the StatefulSet, then its claims', async () => {
    await client.delete(STATEFULSET_MACHINE, ns, 'alpha');
    await waitFor(
      'the StatefulSetMachine, its StatefulSet and its claims to be gone',
      async () =>
        (await getLive(() => client.get<StatefulSetMachine>(STATEFULSET_MACHINE, ns, 'alpha'))) ===
          undefined &&
        (await set('alpha')) === undefined &&
        (await claim('data-alpha-0')) === undefined &&
        (await claim('logs-alpha-0')) === undefined,
      { timeoutMs: 90_000, intervalMs: 500 },
    );
  });
});
