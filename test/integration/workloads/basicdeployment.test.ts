import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { runOk } from '../../../e2e/providers/exec.ts';
import { NEVER_READY_ANNOTATION } from '../../../e2e/providers/local/kwok-stages.ts';
import { testCluster } from '../../../e2e/support/cluster.ts';
import { readQueue, waitForQueue } from '../../../e2e/support/queue-metrics.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  BASIC_DEPLOYMENT,
  BASIC_REPLICA_SET,
  type BasicDeployment,
  type BasicReplicaSet,
  POD_TEMPLATE_HASH_LABEL,
  REVISION_ANNOTATION,
} from '../../../src/apis/index.ts';
import { CONTROLLER_NAME } from '../../../src/controllers/basicdeployment/index.ts';
import { registerControllers } from '../../../src/controllers/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { OPERATOR_DEFAULTS } from '../../support/operator-options.ts';
import { ObjectWatcher, PodWatcher, podIsAvailable, podIsLive } from '../../support/pod-watch.ts';
import { type OperatorSuite, startOperatorSuite, stopOperatorSuite } from '../../support/suite.ts';

type Spec = BasicDeployment['spec'];

function deployment(namespace: string, name: string, spec: Partial<Spec> = {}): BasicDeployment {
  return {
    apiVersion: BASIC_DEPLOYMENT.apiVersion,
    kind: BASIC_DEPLOYMENT.kind,
    metadata: { name, namespace },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      },
      ...spec,
    },
  };
}

describe('BasicDeployment controller', () => {
  let suite: OperatorSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    suite = await startOperatorSuite('bd', (m) => registerControllers(m, OPERATOR_DEFAULTS));
    ({ client, ns } = suite);
  });
  after(() => stopOperatorSuite(suite));

  const get = (name: string) => client.get<BasicDeployment>(BASIC_DEPLOYMENT, ns, name);
  const sets = async (name: string) =>
    (await client.list<BasicReplicaSet>(BASIC_REPLICA_SET, { namespace: ns })).items.filter(
      (s) => s.metadata.ownerReferences?.[0]?.name === name,
    );
  const livePods = async (app: string) =>
    (await client.list<V1Pod>(CoreTypes.Pod, { namespace: ns, labelSelector: `app=${app}` })).items.filter(
      podIsLive,
    );
  const ready = (name: string, replicas: number, timeoutMs = 60_000) =>
    waitFor(
      `${name} to be Ready with ${replicas} replicas`,
      async () => {
        const d = await get(name);
        const s = d.status;
        return s?.ready === true &&
          s.observedGeneration === d.metadata.generation &&
          s.availableReplicas === replicas &&
          s.updatedReplicas === replicas &&
          s.replicas === replicas
          ? d
          : undefined;
      },
      { timeoutMs },
    );
  /** controller_runtime_reconcile_total of this controller, all results. */
  const reconciles = async () => {
    const metric = await suite!.manager.registry.getSingleMetric('controller_runtime_reconcile_total')?.get();
    return (metric?.values ?? [])
      .filter((v) => v.labels.controller === 'basicdeployment')
      .reduce((n, v) => n + v.value, 0);
  };
  const setImage = (name: string, image: string) =>
    client.patch(BASIC_DEPLOYMENT, {
      namespace: ns,
      name,
      patchType: 'json',
      body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image }],
    });

  it('creates, scales up and down, replaces a deleted pod, and is garbage-collected on delete', async () => {
    await client.create(BASIC_DEPLOYMENT, deployment(ns, 'web'));
    const d = await ready('web', 3);
    assert.equal(d.status?.selector, 'app=web');
    for (const type of ['Available', 'Progressing', 'Ready']) {
      assert.equal(d.status?.conditions?.find((c) => c.type === type)?.status, 'True', `${type} is True`);
    }
    const [set] = await sets('web');
    assert.ok(set, 'one BasicReplicaSet');
    assert.equal(set.metadata.annotations?.[REVISION_ANNOTATION], '1');
    assert.ok(set.metadata.name?.startsWith('web-'));
    const hash = set.metadata.labels?.[POD_TEMPLATE_HASH_LABEL];
    assert.ok(hash);
    assert.equal(set.metadata.name, `web-${hash}`);
    assert.ok((await livePods('web')).every((p) => p.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL] === hash));

    const info = await testCluster();
    await runOk(info.kubectl, ['--kubeconfig', info.kubeconfig, '-n', ns, 'scale', 'bd/web', '--replicas=5']);
    await ready('web', 5);
    await runOk(info.kubectl, [
      '--kubeconfig',
      info.kubeconfig,
      '-n',
      ns,
      'wait',
      '--for=condition=Ready',
      'bd/web',
      '--timeout=30s',
    ]);
    await client.patch(BASIC_DEPLOYMENT, {
      namespace: ns,
      name: 'web',
      patchType: 'merge',
      body: { spec: { replicas: 2 } },
    });
    await ready('web', 2);

    const [victim] = await livePods('web');
    await client.delete(CoreTypes.Pod, ns, victim!.metadata!.name!);
    await waitFor('the pod to be replaced', async () => {
      const live = await livePods('web');
      return live.length === 2 && !live.some((p) => p.metadata?.uid === victim!.metadata?.uid);
    });
    await ready('web', 2);

    await client.delete(BASIC_DEPLOYMENT, ns, 'web');
    await waitFor('sets and pods to be garbage-collected', async () => {
      const all = await client.list<BasicReplicaSet>(BASIC_REPLICA_SET, { namespace: ns });
      const pods = await client.list<V1Pod>(CoreTypes.Pod, { namespace: ns, labelSelector: 'app=web' });
      return (
        all.items.filter((s) => s.metadata.name?.startsWith('web-')).length === 0 && pods.items.length === 0
      );
    });
  });

  it('rolls 10 replicas with maxSurge 2 / maxUnavailable 1: the sets never ask for more than 12 replicas, never fewer than 9 available', async () => {
    await client.create(
      BASIC_DEPLOYMENT,
      deployment(ns, 'roll', {
        replicas: 10,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 2, maxUnavailable: 1 } },
      }),
    );
    await ready('roll', 10);
    let maxPods = 0;
    let maxSetReplicas = 0;
    let minAvailable = Number.POSITIVE_INFINITY;
    const watcher = new PodWatcher(client, ns, 'app=roll', (pods) => {
      maxPods = Math.max(maxPods, pods.filter(podIsLive).length);
      minAvailable = Math.min(minAvailable, pods.filter(podIsAvailable).length);
    });
    const setWatcher = new ObjectWatcher(client, BASIC_REPLICA_SET, ns, 'app=roll', (all) => {
      maxSetReplicas = Math.max(
        maxSetReplicas,
        all.reduce((n, s) => n + (s.spec.replicas ?? 1), 0),
      );
    });
    await waitFor('the watchers to list', () => watcher.pods.size >= 10 && setWatcher.objects.size >= 1);
    await setImage('roll', 'registry.k8s.io/pause:3.9');
    const d = await ready('roll', 10, 120_000);
    await Promise.all([watcher.stop(), setWatcher.stop()]);
    assert.ok(watcher.events > 20, `the watcher saw the rollout (${watcher.events} events)`);
    // apps/v1's bound is on the replicas the sets ask for: 10 + maxSurge 2.
    assert.ok(maxSetReplicas <= 12, `the sets asked for at most 12 replicas at once, saw ${maxSetReplicas}`);
    // Live pods lag their sets: the old set's controller deletes its pod while the new set's creates
    // one, so one pod above the bound can be seen for a moment, with kube-controller-manager too (the
    // parity harness allows the same one pod of slack on both sides).
    assert.ok(maxPods <= 13, `at most 12 pods at once plus one being replaced, saw ${maxPods}`);
    assert.ok(minAvailable >= 9, `at least 9 available at every event, saw ${minAvailable}`);
    const all = await sets('roll');
    assert.equal(all.length, 2);
    const newSet = all.find((s) => s.spec.template.spec.containers[0]?.image === 'registry.k8s.io/pause:3.9');
    assert.equal(newSet?.spec.replicas, 10);
    assert.equal(newSet?.metadata.annotations?.[REVISION_ANNOTATION], '2');
    assert.equal(all.find((s) => s !== newSet)?.spec.replicas, 0);
    assert.equal(
      d.status?.conditions?.find((c) => c.type === 'Progressing')?.reason,
      'NewReplicaSetAvailable',
    );
  });

  it('Recreate: old and new pods never coexist', async () => {
    await client.create(
      BASIC_DEPLOYMENT,
      deployment(ns, 'recreate', { replicas: 4, strategy: { type: 'Recreate' } }),
    );
    await ready('recreate', 4);
    let overlap = 0;
    const watcher = new PodWatcher(client, ns, 'app=recreate', (pods) => {
      const images = new Set(pods.map((p) => p.spec?.containers[0]?.image));
      if (images.size > 1) overlap++;
    });
    await waitFor('the watcher to list', () => watcher.pods.size >= 4);
    await setImage('recreate', 'registry.k8s.io/pause:3.9');
    await ready('recreate', 4, 120_000);
    await watcher.stop();
    assert.equal(overlap, 0, 'no event showed pods of both templates (terminating ones included)');
    assert.ok(
      (await livePods('recreate')).every((p) => p.spec?.containers[0]?.image === 'registry.k8s.io/pause:3.9'),
    );
  });

  it('switches to Recreate with kubectl apply (the defaulted rollingUpdate stays and is ignored)', async () => {
    const info = await testCluster();
    const apply = (manifest: BasicDeployment) =>
      runOk(info.kubectl, ['--kubeconfig', info.kubeconfig, 'apply', '-f', '-'], {
        input: JSON.stringify(manifest),
      });
    // No strategy: the API server defaults RollingUpdate with rollingUpdate 25%/25%.
    await apply(deployment(ns, 'switch', { replicas: 2 }));
    await ready('switch', 2);
    // kubectl apply sends a JSON merge patch for a custom resource: {spec: {strategy: {type: Recreate}}}
    // plus the new template; the stored rollingUpdate is not in it, so it stays.
    const switched = deployment(ns, 'switch', { replicas: 2, strategy: { type: 'Recreate' } });
    switched.spec.template.spec.containers[0]!.image = 'registry.k8s.io/pause:3.9';
    let overlap = 0;
    const watcher = new PodWatcher(client, ns, 'app=switch', (pods) => {
      if (new Set(pods.map((p) => p.spec?.containers[0]?.image)).size > 1) overlap++;
    });
    await waitFor('the watcher to list', () => watcher.pods.size >= 2);
    await apply(switched);
    const stored = await get('switch');
    assert.equal(stored.spec.strategy?.type, 'Recreate');
    await ready('switch', 2, 120_000);
    await watcher.stop();
    assert.equal(overlap, 0, 'the rollout was a Recreate: old and new pods never coexisted');
  });

  it('adopts an orphan set created later that its selector matches, and releases a set whose labels stop matching', async () => {
    await client.create(BASIC_DEPLOYMENT, deployment(ns, 'claim', { replicas: 1 }));
    await ready('claim', 1);
    const [own] = await sets('claim');
    // Let the tail of the rollout pass first, or it could adopt the orphan in the watch's stead: a
    // set's held-back status write (up to 1 s) wakes the deployment, a conflict requeues it after 1 s.
    await new Promise((r) => setTimeout(r, 6000));
    // An orphan whose labels the deployment's selector matches: the deployment is idle, so only a
    // watch on sets can wake it.
    const labels = { app: 'claim', extra: 'orphan' };
    await client.create<BasicReplicaSet>(BASIC_REPLICA_SET, {
      apiVersion: BASIC_REPLICA_SET.apiVersion,
      kind: BASIC_REPLICA_SET.kind,
      metadata: { name: 'claim-orphan', namespace: ns, labels },
      spec: {
        replicas: 0,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9' }] },
        },
      },
    });
    await waitFor(
      'the orphan to be adopted',
      async () =>
        (await client.get<BasicReplicaSet>(BASIC_REPLICA_SET, ns, 'claim-orphan')).metadata
          .ownerReferences?.[0]?.name === 'claim',
      { timeoutMs: 20_000 },
    );
    // The deployment's current set stops matching its selector: it is released (the deployment then
    // makes a new set for its template).
    await client.patch(BASIC_REPLICA_SET, {
      namespace: ns,
      name: own!.metadata.name!,
      patchType: 'merge',
      body: {
        metadata: { labels: { app: 'released' } },
      },
    });
    await waitFor(
      'the set to be released',
      async () => {
        const released = await client.get<BasicReplicaSet>(BASIC_REPLICA_SET, ns, own!.metadata.name!);
        return (released.metadata.ownerReferences ?? []).length === 0;
      },
      { timeoutMs: 20_000 },
    );
    await ready('claim', 1, 60_000);
    assert.ok(!(await sets('claim')).some((s) => s.metadata.uid === own!.metadata.uid));
  });

  it('adopts a hand-made pod of its current set right after a heal and deletes the surplus, every time (10 rounds)', async () => {
    // kube-controller-manager adopts such a pod into the ReplicaSet and deletes the surplus at once.
    // Right after a heal the set is reconciled often (its new pod's updates), so a second reconcile
    // can see the hand-made pod as an orphan in the metadata cache after the first adopted it.
    await client.create(BASIC_DEPLOYMENT, deployment(ns, 'handmade'));
    await ready('handmade', 3);
    const [set] = await sets('handmade');
    const hash = set!.metadata.labels?.[POD_TEMPLATE_HASH_LABEL];
    assert.ok(hash, 'the set has a pod-template-hash label');
    const controlledBySet = (pod: V1Pod) =>
      pod.metadata?.ownerReferences?.some((r) => r.controller && r.uid === set!.metadata.uid) === true;
    for (let round = 1; round <= 10; round++) {
      const before = await livePods('handmade');
      const victim = before[0]!;
      await client.delete(CoreTypes.Pod, ns, victim.metadata!.name!);
      const healed = await waitFor(`round ${round}: the deleted pod replaced`, async () => {
        const live = await livePods('handmade');
        return live.length === 3 && !live.some((p) => p.metadata?.uid === victim.metadata?.uid)
          ? live
          : undefined;
      });
      const name = `handmade-by-hand-${round}`;
      await client.create<V1Pod>(CoreTypes.Pod, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: ns, labels: { app: 'handmade', [POD_TEMPLATE_HASH_LABEL]: hash } },
        spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      });
      const known = new Set([...healed.map((p) => p.metadata?.uid), name]);
      // The set stalls for 5 minutes (its expectations' timeout) when it loses count; 30 s is plenty
      // for an adoption and a deletion.
      const settled = await waitFor(
        `round ${round}: the hand-made pod adopted (or deleted as the surplus) and 3 pods left`,
        async () => {
          const live = await livePods('handmade');
          const byHand = live.find((p) => p.metadata?.name === name);
          return live.length === 3 && (byHand === undefined || controlledBySet(byHand)) ? live : undefined;
        },
        { timeoutMs: 30_000 },
      );
      for (const pod of settled) {
        assert.ok(controlledBySet(pod), `round ${round}: ${pod.metadata?.name} belongs to the set`);
        assert.ok(
          known.has(pod.metadata?.uid) || known.has(pod.metadata?.name),
          `round ${round}: ${pod.metadata?.name} was created after the hand-made pod: the set lost count`,
        );
      }
      await ready('handmade', 3);
    }
  });

  it('a paused deployment past its progress deadline does not reconcile in a loop', async (t) => {
    await client.create(
      BASIC_DEPLOYMENT,
      deployment(ns, 'idle', { replicas: 1, progressDeadlineSeconds: 5 }),
    );
    await ready('idle', 1);
    await client.patch(BASIC_DEPLOYMENT, {
      namespace: ns,
      name: 'idle',
      patchType: 'merge',
      body: {
        spec: {
          paused: true,
          template: { spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9' }] } },
        },
      },
    });
    const paused = await waitFor('the paused status of the latest generation', async () => {
      const d = await get('idle');
      return d.status?.observedGeneration === d.metadata.generation &&
        d.status?.conditions?.find((c) => c.type === 'Progressing')?.reason === 'DeploymentPaused'
        ? d
        : undefined;
    });
    // The deadline counts from the last progress (the first rollout's end): let it pass.
    const deadline = Date.parse(paused.status?.lastProgressTime ?? '') + 5000;
    assert.ok(Number.isFinite(deadline), 'lastProgressTime is set');
    await new Promise((r) => setTimeout(r, Math.max(0, deadline + 1000 - Date.now())));
    // A reconcile past the deadline, whatever was scheduled before it (an annotation wakes the
    // deployment), runs to the end and schedules nothing: a requeue, however slow, is a loop.
    const metrics = suite!.manager.ports.metrics!;
    const touched = await readQueue(metrics, CONTROLLER_NAME);
    await client.patch(BASIC_DEPLOYMENT, {
      namespace: ns,
      name: 'idle',
      patchType: 'merge',
      body: { metadata: { annotations: { 'test.basicoperator.dev/touched': 'past-the-deadline' } } },
    });
    const settled = await waitForQueue(
      metrics,
      CONTROLLER_NAME,
      'a reconcile past the deadline, and nothing queued or running',
      (q) => q.adds > touched.adds && q.depth === 0 && q.active === 0,
    );
    assert.equal(
      settled.retries,
      touched.retries,
      `nothing scheduled while paused: ${JSON.stringify(settled)}`,
    );
    const before = await reconciles();
    await new Promise((r) => setTimeout(r, 10_000));
    const spent = (await reconciles()) - before;
    t.diagnostic(`reconciles in the 10 s after the deadline, while paused: ${spent}`);
    assert.ok(spent < 30, `at most a few reconciles in 10 s past the deadline while paused, saw ${spent}`);
    assert.equal((await sets('idle')).length, 1, 'no new set while paused');
    await client.patch(BASIC_DEPLOYMENT, {
      namespace: ns,
      name: 'idle',
      patchType: 'merge',
      body: { spec: { paused: false } },
    });
    await ready('idle', 1);
  });

  it('reports a rollout to pods that never become Ready as in progress, not as the finished one before it', async () => {
    // maxSurge 0: the old pod goes first, so for a moment no set reports a pod. The sync that sees
    // that comes right after the one that created the new set, before the cache shows the status it
    // wrote; judged on the cached status, the rollout looked finished (parity seed 10).
    await client.create(
      BASIC_DEPLOYMENT,
      deployment(ns, 'unready', {
        replicas: 1,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
      }),
    );
    await ready('unready', 1);
    await client.patch(BASIC_DEPLOYMENT, {
      namespace: ns,
      name: 'unready',
      patchType: 'merge',
      body: {
        spec: { template: { metadata: { annotations: { [NEVER_READY_ANNOTATION]: 'true' } } } },
      },
    });
    await waitFor('the new set to run its pod', async () => {
      const all = await sets('unready');
      const newest = all.find((s) => s.spec.template.metadata?.annotations?.[NEVER_READY_ANNOTATION]);
      return all.length === 2 && newest?.status?.replicas === 1 ? newest : undefined;
    });
    // Judged by a sync that saw the new set run its pod: the status of the latest generation counts
    // that pod as updated.
    const d = await waitFor('the status to count the new pod', async () => {
      const current = await get('unready');
      const s = current.status;
      return s?.observedGeneration === current.metadata.generation &&
        s?.updatedReplicas === 1 &&
        s.replicas === 1
        ? current
        : undefined;
    });
    const progressing = d.status?.conditions?.find((c) => c.type === 'Progressing');
    assert.equal(progressing?.status, 'True');
    assert.notEqual(progressing?.reason, 'NewReplicaSetAvailable', 'the rollout is not finished');
    assert.equal(d.status?.ready, false);
    assert.equal(d.status?.availableReplicas, 0);
  });

  it('reports two changes a tenth of a second apart in one status write (its 250 ms batch period)', async () => {
    // Pods that never become Ready: the rollout is never done, so no report skips the period.
    const notReady = deployment(ns, 'batched', {
      replicas: 1,
      template: {
        metadata: { labels: { app: 'batched' }, annotations: { [NEVER_READY_ANNOTATION]: 'true' } },
        spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      },
    });
    notReady.metadata.labels = { test: 'batched' };
    await client.create(BASIC_DEPLOYMENT, notReady);
    await waitFor('the first generation reported', async () => {
      const d = await get('batched');
      return d.status?.observedGeneration === 1 && d.status.replicas === 1 ? d : undefined;
    });
    const reported: number[] = [];
    const watcher = new ObjectWatcher(client, BASIC_DEPLOYMENT, ns, 'test=batched', (all) => {
      const generation = all[0]?.status?.observedGeneration;
      if (generation !== undefined && reported.at(-1) !== generation) reported.push(generation);
    });
    await waitFor('the watch to start', () => reported.length > 0);
    const bump = (revisionHistoryLimit: number) =>
      client.patch(BASIC_DEPLOYMENT, {
        namespace: ns,
        name: 'batched',
        patchType: 'merge',
        body: { spec: { revisionHistoryLimit } },
      });
    await bump(4);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await bump(3);
    await waitFor('the third generation reported', () => reported.at(-1) === 3);
    await watcher.stop();
    assert.deepEqual(reported, [1, 3], 'generation 2 was replaced before its report was sent');
  });

  it('settles after minReadySeconds changes, with no reconcile loop once at rest', async (t) => {
    await client.create(BASIC_DEPLOYMENT, deployment(ns, 'mrs', { replicas: 3 }));
    await ready('mrs', 3);
    for (const minReadySeconds of [2, 0, 2]) {
      await client.patch(BASIC_DEPLOYMENT, {
        namespace: ns,
        name: 'mrs',
        patchType: 'merge',
        body: { spec: { minReadySeconds } },
      });
    }
    await waitFor('the set to follow minReadySeconds and the rollout to be complete', async () => {
      const d = await get('mrs');
      const [set] = await sets('mrs');
      return d.status?.observedGeneration === d.metadata.generation &&
        d.status?.ready === true &&
        set?.spec.minReadySeconds === 2
        ? d
        : undefined;
    });
    await new Promise((r) => setTimeout(r, 3000)); // pods' availability requeues fall due
    const before = await reconciles();
    await new Promise((r) => setTimeout(r, 10_000));
    const spent = (await reconciles()) - before;
    t.diagnostic(`basicdeployment reconciles in 10 s at rest after minReadySeconds changes: ${spent}`);
    assert.ok(spent <= 5, `at rest, a deployment is not reconciled again and again: ${spent} in 10 s`);
  });

  it('counts a rollout past its progress deadline in basic_operator_basicdeployments_progress_deadline_exceeded', async () => {
    const pastDeadline = async () =>
      (
        await suite!.manager.registry
          .getSingleMetric('basic_operator_basicdeployments_progress_deadline_exceeded')
          ?.get()
      )?.values[0]?.value ?? Number.NaN;
    const before = await pastDeadline();
    await client.create(
      BASIC_DEPLOYMENT,
      deployment(ns, 'late', {
        replicas: 1,
        progressDeadlineSeconds: 3,
        template: {
          metadata: { labels: { app: 'late' }, annotations: { [NEVER_READY_ANNOTATION]: 'true' } },
          spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
        },
      }),
    );
    await waitFor('Progressing=False, ProgressDeadlineExceeded', async () => {
      const progressing = (await get('late')).status?.conditions?.find((c) => c.type === 'Progressing');
      return progressing?.reason === 'ProgressDeadlineExceeded' ? progressing : undefined;
    });
    // Computed from the informer cache at the scrape, which follows the API server closely.
    await waitFor('the gauge to count it', async () =>
      (await pastDeadline()) === before + 1 ? true : undefined,
    );
    await client.delete(BASIC_DEPLOYMENT, ns, 'late');
    await waitFor('the gauge to forget it', async () =>
      (await pastDeadline()) === before ? true : undefined,
    );
  });

  it("shows a set's ReplicaFailure (pods the API server refuses) and removes it once pods are created again", async () => {
    await client.create(
      BASIC_DEPLOYMENT,
      deployment(ns, 'refused', {
        replicas: 1,
        template: {
          metadata: { labels: { app: 'refused' } },
          // The pod spec is passed through to the API server, which refuses this port.
          spec: {
            containers: [
              { name: 'app', image: 'registry.k8s.io/pause:3.10', ports: [{ containerPort: 70000 }] },
            ],
          },
        },
      }),
    );
    const failed = await waitFor('ReplicaFailure on the deployment', async () => {
      const c = (await get('refused')).status?.conditions?.find((x) => x.type === 'ReplicaFailure');
      return c?.status === 'True' ? c : undefined;
    });
    assert.equal(failed.reason, 'FailedCreate');
    assert.match(failed.message, /70000|containerPort/);
    await client.patch(BASIC_DEPLOYMENT, {
      namespace: ns,
      name: 'refused',
      patchType: 'json',
      body: [{ op: 'remove', path: '/spec/template/spec/containers/0/ports' }],
    });
    await ready('refused', 1);
    await waitFor(
      'ReplicaFailure to be removed',
      async () => !(await get('refused')).status?.conditions?.some((x) => x.type === 'ReplicaFailure'),
    );
  });

  it('cuts a refusal longer than a condition keeps, so the status still reaches the API server', async () => {
    // 256 variables whose names hold '=' (core/v1 refuses each, quoting the name): a refusal of
    // about 100,000 characters, three times what metav1.Condition takes and 24 times what ours keep.
    const env = Array.from({ length: 256 }, (_, i) => ({ name: `${i}=${'x'.repeat(240)}`, value: 'v' }));
    await client.create(
      BASIC_DEPLOYMENT,
      deployment(ns, 'long-refusal', {
        replicas: 1,
        template: {
          metadata: { labels: { app: 'long-refusal' } },
          spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', env }] },
        },
      }),
    );
    const failed = await waitFor('ReplicaFailure with the cut refusal on the deployment', async () => {
      const c = (await get('long-refusal')).status?.conditions?.find((x) => x.type === 'ReplicaFailure');
      return c?.status === 'True' ? c : undefined;
    });
    assert.equal(failed.reason, 'FailedCreate');
    assert.equal([...failed.message].length, 4096);
    assert.match(failed.message, /env\[0\]\.name/);
    assert.match(failed.message, /\.\.\. \(\d+ more characters\)$/);
    await client.delete(BASIC_DEPLOYMENT, ns, 'long-refusal');
  });

  it('makes the set of a deployment with the most labels its schema allows (the set holds one more)', async () => {
    const labels = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`label-${i}`, `${i}`]));
    await client.create(
      BASIC_DEPLOYMENT,
      deployment(ns, 'many-labels', {
        replicas: 0,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
        },
      }),
    );
    const [set] = await waitFor('its BasicReplicaSet', async () => {
      const found = await sets('many-labels');
      return found.length > 0 ? found : undefined;
    });
    assert.equal(Object.keys(set?.spec.template.metadata?.labels ?? {}).length, 65);
    await client.delete(BASIC_DEPLOYMENT, ns, 'many-labels');
  });

  describe('the CRD rejects bad input with readable messages', () => {
    const rejects = async (name: string, spec: Partial<Spec>, pattern: RegExp) => {
      await assert.rejects(client.create(BASIC_DEPLOYMENT, deployment(ns, name, spec)), (err: Error) => {
        assert.match(err.message, pattern);
        return true;
      });
    };
    it('selector must match the template labels', () =>
      rejects('bad-selector', { selector: { matchLabels: { app: 'other' } } }, /selector.*template/i));
    it('replicas must be >= 0', () =>
      rejects('bad-replicas', { replicas: -1 }, /replicas.*(greater than or equal to 0|>= 0)/i));
    it('maxSurge and maxUnavailable may not both be zero', () =>
      rejects(
        'bad-zero',
        { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '0%' } } },
        /maxSurge.*maxUnavailable|both/i,
      ));
    it('percentages must look like N%', () =>
      rejects(
        'bad-percent',
        { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 'lots' } } },
        /maxSurge/,
      ));
    it('a name too long for "<name>-<pod-template-hash>" is refused; the longest allowed is accepted', async () => {
      // The label values stay short: a name is no label value.
      const named = (name: string) =>
        deployment(ns, name, {
          replicas: 0,
          selector: { matchLabels: { app: 'long-name' } },
          template: {
            metadata: { labels: { app: 'long-name' } },
            spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
          },
        });
      await assert.rejects(client.create(BASIC_DEPLOYMENT, named('n'.repeat(243))), (err: Error) => {
        assert.match(err.message, /metadata\.name may be at most 242 characters/);
        return true;
      });
      const longest = 'n'.repeat(242);
      await client.create(BASIC_DEPLOYMENT, named(longest));
      const [set] = await waitFor('the set of the longest name', async () => {
        const found = await sets(longest);
        return found.length > 0 ? found : undefined;
      });
      assert.ok((set?.metadata.name ?? '').length <= 253);
      await client.delete(BASIC_DEPLOYMENT, ns, longest);
    });
    it('template annotations beyond 256 KiB in all are refused', () =>
      rejects(
        'big-annotations',
        {
          template: {
            metadata: {
              labels: { app: 'big-annotations' },
              annotations: { a: 'x'.repeat(200_000), b: 'x'.repeat(70_000) },
            },
            spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
          },
        },
        /annotations may total at most 262144 characters/,
      ));
    it('an image longer than 4096 characters and more than 100 containers are refused', async () => {
      const containers = Array.from({ length: 101 }, (_, i) => ({ name: `c${i}`, image: 'pause' }));
      await rejects(
        'many-containers',
        {
          template: {
            metadata: { labels: { app: 'many-containers' } },
            spec: { containers },
          },
        },
        /spec\.template\.spec\.containers: Too many: .*must have at most 100 items/,
      );
      await rejects(
        'long-image',
        {
          template: {
            metadata: { labels: { app: 'long-image' } },
            spec: { containers: [{ name: 'app', image: `registry.example.com/${'i'.repeat(4096)}` }] },
          },
        },
        /spec\.template\.spec\.containers\[0\]\.image: Too long: .*may not be more than 4096/,
      );
    });
    it('the selector is immutable', async () => {
      await client.create(BASIC_DEPLOYMENT, deployment(ns, 'immutable', { replicas: 0 }));
      await assert.rejects(
        client.patch(BASIC_DEPLOYMENT, {
          namespace: ns,
          name: 'immutable',
          patchType: 'merge',
          body: {
            spec: {
              selector: { matchLabels: { app: 'immutable', x: 'y' } },
              template: { metadata: { labels: { app: 'immutable', x: 'y' } } },
            },
          },
        }),
        /immutable/i,
      );
    });
  });
});
