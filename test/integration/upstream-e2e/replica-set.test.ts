import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { waitFor } from '../../../e2e/support/wait.ts';
import { isConflict, isNotFound } from '../../../src/runtime/client/errors.ts';
import { CoreTypes, objectPath } from '../../../src/runtime/client/resource.ts';
import {
  type CaseContext,
  controllerOf,
  deleteCollection,
  getReplicaSet,
  getScale,
  History,
  type Kind,
  listPods,
  newRS,
  type ReplicaSetObject,
  runForBothKinds,
  selectorString,
  updateAndPatchStatusConditions,
  updateReplicaSet,
  updateScale,
  waitForPodsRunning,
  waitForReplicaSet,
} from './kinds.ts';

/**
 * Kubernetes v1.36.3 test/e2e/apps/replica_set.go, case by case (the line of each ginkgo.It or
 * framework.ConformanceIt is in the test's name), run against ReplicaSet and BasicReplicaSet alike.
 */

const AGNHOST_NAME = 'agnhost';
const AGNHOST = 'registry.k8s.io/e2e-test-images/agnhost:2.59';
const PAUSE = 'registry.k8s.io/pause:3.10.1';

function upstreamCase(where: string, name: string, body: (c: CaseContext) => Promise<void>) {
  it(`${where} ${name}`, { timeout: 180_000, concurrency: 2 }, (t) => runForBothKinds(t, 'ReplicaSet', body));
}

const statusPath = (k: Kind, name: string) => objectPath(k.replicaSets, k.ns, name, 'status');

/** e2epod.PodsCreatedByLabel: `count` live pods with the labels, controlled by the set. */
function podsCreatedBy(k: Kind, rs: ReplicaSetObject, labels: Record<string, string>, count: number) {
  return waitFor(`${count} pods of ${k.replicaSetKind} ${rs.metadata.name}`, async () => {
    const pods = (await listPods(k, labels)).filter(
      (p) => !p.metadata?.deletionTimestamp && controllerOf(p)?.uid === rs.metadata.uid,
    );
    return pods.length === count ? pods : undefined;
  });
}

describe("Kubernetes' e2e: ReplicaSet (test/e2e/apps/replica_set.go, v1.36.3)", () => {
  upstreamCase(
    'replica_set.go:114',
    'should serve a basic image on each replica with a public image',
    async ({ k }) => {
      const name = `my-hostname-basic-${randomUUID()}`;
      const labels = { name };
      const rs = newRS(k, name, 1, labels, name, AGNHOST);
      const container = rs.spec.template.spec.containers[0]!;
      container.args = ['serve-hostname'];
      container.ports = [{ containerPort: 9376 }];
      const created = await k.client.create(k.replicaSets, rs);
      const pods = await podsCreatedBy(k, created, labels, 1);
      let running = 0;
      for (const pod of pods) {
        await waitFor(`pod ${pod.metadata?.name} to be Running`, async () => {
          const p = await k.client.get<V1Pod>(CoreTypes.Pod, k.ns, pod.metadata?.name ?? '');
          return p.status?.phase === 'Running';
        });
        running++;
      }
      assert.equal(running, 1, 'one running pod');
      // Upstream then dials each pod for its hostname: kwok runs no container (docs/parity.md).
    },
  );

  it('replica_set.go:118 should serve a basic image on each replica with a private image', {
    skip: 'not applicable: needs a private registry on gce and a container that answers HTTP (docs/parity.md)',
  });

  upstreamCase(
    'replica_set.go:125',
    'should surface a failure condition on a common issue like exceeded quota',
    async ({ k }) => {
      const name = 'condition-test';
      await k.client.create(CoreTypes.ResourceQuota, {
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: { name, namespace: k.ns },
        spec: { hard: { pods: '2' } },
      });
      await waitFor(`resource quota ${name} to be synced`, async () => {
        const quota = await k.client.get<
          { status?: { hard?: Record<string, string> } } & {
            metadata: { name?: string };
          }
        >(CoreTypes.ResourceQuota, k.ns, name);
        return quota.status?.hard?.pods === '2';
      });

      const created = await k.client.create(
        k.replicaSets,
        newRS(k, name, 3, { name }, AGNHOST_NAME, AGNHOST),
      );
      await waitForReplicaSet(
        k,
        name,
        'a ReplicaFailure condition',
        (rs) =>
          (rs.status?.observedGeneration ?? 0) >= (created.metadata.generation ?? 0) &&
          (rs.status?.conditions ?? []).some((c) => c.type === 'ReplicaFailure'),
      );

      const scaled = await updateReplicaSet(k, name, (u) => {
        u.spec.replicas = 2;
      });
      await waitForReplicaSet(
        k,
        name,
        'no ReplicaFailure condition',
        (rs) =>
          (rs.status?.observedGeneration ?? 0) >= (scaled.metadata.generation ?? 0) &&
          !(rs.status?.conditions ?? []).some((c) => c.type === 'ReplicaFailure'),
      );
    },
  );

  upstreamCase(
    'replica_set.go:134',
    'should adopt matching pods on creation and release no longer matching pods',
    async ({ k }) => {
      const name = 'pod-adoption-release';
      const labels = { name };
      await k.client.create<V1Pod>(CoreTypes.Pod, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: k.ns, labels: { ...labels } },
        spec: { containers: [{ name, image: AGNHOST }] },
      });
      await waitForPodsRunning(k, labels, 1);

      const rs = await k.client.create(k.replicaSets, newRS(k, name, 1, labels, name, AGNHOST));
      await waitFor('the orphan pod to be adopted (or deleted)', async () => {
        try {
          const p = await k.client.get<V1Pod>(CoreTypes.Pod, k.ns, name);
          return (p.metadata?.ownerReferences ?? []).some((o) => o.controller && o.uid === rs.metadata.uid);
        } catch (err) {
          if (isNotFound(err)) return true;
          throw err;
        }
      });

      const [pod] = await podsCreatedBy(k, rs, labels, 1);
      const podName = pod?.metadata?.name ?? '';
      for (let attempt = 1; ; attempt++) {
        const current = await k.client.get<V1Pod>(CoreTypes.Pod, k.ns, podName);
        current.metadata = { ...current.metadata, labels: { name: 'not-matching-name' } };
        try {
          await k.client.update(CoreTypes.Pod, current);
          break;
        } catch (err) {
          if (!isConflict(err) || attempt >= 20) throw err;
        }
      }
      await waitFor(`pod ${podName} to be released`, async () => {
        const p = await k.client.get<V1Pod>(CoreTypes.Pod, k.ns, podName);
        return !(p.metadata?.ownerReferences ?? []).some((o) => o.controller && o.uid === rs.metadata.uid);
      });
    },
  );

  upstreamCase('replica_set.go:146', 'Replicaset should have a working scale subresource', async ({ k }) => {
    const rsName = 'test-rs';
    const created = await k.client.create(
      k.replicaSets,
      newRS(k, rsName, 1, { name: 'sample-pod', pod: AGNHOST_NAME }, AGNHOST_NAME, AGNHOST),
    );
    await waitForReplicaSet(
      k,
      rsName,
      '1 available replica',
      (rs) =>
        (rs.status?.observedGeneration ?? 0) >= (created.metadata.generation ?? 0) &&
        rs.status?.availableReplicas === 1,
    );

    const scale = await getScale(k, k.replicaSets, rsName);
    assert.equal(scale.spec.replicas, 1);
    assert.equal(scale.status?.replicas, 1);

    scale.metadata.resourceVersion = ''; // unconditional
    scale.spec.replicas = 2;
    const result = await updateScale(k, k.replicaSets, rsName, scale);
    assert.equal(result.spec.replicas, 2);
    assert.equal((await getReplicaSet(k, rsName)).spec.replicas, 2);

    // Upstream sends a strategic merge patch; custom resources take none, a merge patch says the same.
    await k.client.patch(k.replicaSets, {
      namespace: k.ns,
      name: rsName,
      patchType: 'merge',
      subresource: 'scale',
      body: { spec: { replicas: 4 } },
    });
    assert.equal((await getReplicaSet(k, rsName)).spec.replicas, 4, 'replicaset should have 4 replicas');
  });

  upstreamCase('replica_set.go:157', 'Replace and Patch tests', async ({ k }) => {
    const rsName = 'test-rs';
    const podName = 'sample-pod';
    const history = new History(k, k.replicaSets, 'test-rs=patched');
    try {
      const created = await k.client.create(
        k.replicaSets,
        newRS(k, rsName, 1, { name: podName, pod: AGNHOST_NAME }, AGNHOST_NAME, AGNHOST),
      );
      assert.ok(created.metadata.resourceVersion, 'a valid resourceVersion');
      await waitForPodsRunning(k, { name: podName }, 1);

      await updateReplicaSet(k, rsName, (u) => {
        u.spec.replicas = 2;
      });

      // Upstream: a strategic merge patch, which adds the container named test-rs before the
      // template's agnhost one; custom resources take none, so a merge patch here (on both kinds),
      // which replaces the list: what the case asserts (the first container's image) is the same.
      const patched = await k.client.patch(k.replicaSets, {
        namespace: k.ns,
        name: rsName,
        patchType: 'merge',
        body: {
          metadata: { labels: { 'test-rs': 'patched' } },
          spec: {
            replicas: 3,
            template: {
              spec: { terminationGracePeriodSeconds: 0, containers: [{ name: rsName, image: PAUSE }] },
            },
          },
        },
      });
      assert.ok(
        BigInt(patched.metadata.resourceVersion ?? '0') > BigInt(created.metadata.resourceVersion ?? '0'),
        'the patched object has a larger resourceVersion',
      );
      await history.waitSeen(
        `${rsName} patched, with 3 ready and available replicas`,
        (rs: ReplicaSetObject) =>
          rs.metadata.name === rsName &&
          rs.metadata.labels?.['test-rs'] === 'patched' &&
          rs.status?.readyReplicas === 3 &&
          rs.status.availableReplicas === 3 &&
          rs.spec.template.spec.containers[0]?.image === PAUSE &&
          rs.spec.template.spec.terminationGracePeriodSeconds === 0,
      );
    } finally {
      await history.stop();
    }
  });

  upstreamCase('replica_set.go:168', 'should list and delete a collection of ReplicaSets', async ({ k }) => {
    const rsName = 'test-rs';
    const e2eValue = randomBytes(3).toString('hex');
    const labels = { name: 'sample-pod', pod: AGNHOST_NAME, e2e: e2eValue };
    await k.client.create(k.replicaSets, newRS(k, rsName, 3, labels, AGNHOST_NAME, AGNHOST));
    await waitForPodsRunning(k, { name: 'sample-pod' }, 3);
    await getReplicaSet(k, rsName);

    const listed = await k.client.list(k.replicaSets, { labelSelector: `e2e=${e2eValue}` });
    assert.equal(listed.items.length, 1, 'the filtered list finds the set');
    await deleteCollection(k, k.replicaSets, `e2e=${e2eValue}`, 1);
    const after = await k.client.list(k.replicaSets, { labelSelector: `e2e=${e2eValue}` });
    assert.equal(after.items.length, 0, 'the filtered list is empty after DeleteCollection');
  });

  upstreamCase('replica_set.go:179', 'should validate Replicaset Status endpoints', async ({ k }) => {
    const rsName = 'test-rs';
    const labels = { name: 'sample-pod', pod: AGNHOST_NAME };
    const history = new History(k, k.replicaSets, selectorString(labels));
    try {
      await k.client.create(k.replicaSets, newRS(k, rsName, 1, labels, AGNHOST_NAME, AGNHOST));
      await waitForPodsRunning(k, { name: 'sample-pod' }, 1);
      const status = await k.client.request<ReplicaSetObject>('GET', statusPath(k, rsName));
      assert.equal(status.metadata.name, rsName);

      await updateAndPatchStatusConditions(k, k.replicaSets, rsName, history);
    } finally {
      await history.stop();
    }
  });
});
