// reconcile() of the BasicDeployment controller against a fake API server and real informers filled
// from it, as upstream's deployment sync_test.go and rolling_test.go run the deployment controller
// on a fake clientset: which sets it creates, scales and deletes, the status it hands over, its
// requeues and events. The sets' statuses, which the BasicReplicaSet controller would report, come
// from the test (advanceSets).
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import {
  BASIC_DEPLOYMENT,
  BASIC_REPLICA_SET,
  type BasicDeployment,
  type BasicReplicaSet,
  POD_TEMPLATE_HASH_LABEL,
  REVISION_ANNOTATION,
} from '../../../src/apis/index.ts';
import { CONTROLLER_NAME } from '../../../src/controllers/basicdeployment/index.ts';
import {
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  newSetFor,
} from '../../../src/controllers/basicdeployment/logic/replica-sets.ts';
import { computeTemplateHash } from '../../../src/controllers/basicdeployment/logic/template-hash.ts';
import { BasicDeploymentReconciler } from '../../../src/controllers/basicdeployment/reconciler.ts';
import { RevisionWriter } from '../../../src/controllers/basicdeployment/revision-writer.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import { eventsFor } from '../../../src/runtime/events/index.ts';
import { findCondition } from '../../../src/runtime/write/conditions.ts';
import { FakeCluster } from '../../support/fake/cluster.ts';
import { type Harness, harness } from '../../support/fake/harness.ts';

type Spec = BasicDeployment['spec'];

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const MINUTE = 60_000;

const template = (tag: string, labels: Record<string, string> = { app: 'web' }): Spec['template'] => ({
  metadata: { labels },
  spec: { containers: [{ name: 'app', image: `app:${tag}` }] },
});

function deployment(spec: Partial<Spec> = {}, annotations?: Record<string, string>): BasicDeployment {
  return {
    apiVersion: BASIC_DEPLOYMENT.apiVersion,
    kind: BASIC_DEPLOYMENT.kind,
    metadata: { name: 'web', namespace: 'ns', uid: 'uid-web', generation: 1, annotations },
    spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: template('1'), ...spec },
  };
}

const hashOf = (d: BasicDeployment, collisions = 0) =>
  computeTemplateHash(d.spec.template as V1PodTemplateSpec, collisions);
const setName = (tag: string) => `web-${hashOf(deployment({ template: template(tag) }))}`;

/** The set of `tag`'s template as made `age` ago for a deployment of `replicas`, its pods all available. */
function setOf(tag: string, replicas: number, revision: number, age = 0): BasicReplicaSet {
  const d = deployment({ replicas, template: template(tag) });
  const made = newSetFor(d, hashOf(d), replicas, BigInt(revision));
  made.metadata.uid = `uid-${made.metadata.name}`;
  made.metadata.generation = 1;
  made.metadata.creationTimestamp = new Date(NOW - age);
  made.status = {
    replicas,
    activeReplicas: replicas,
    readyReplicas: replicas,
    availableReplicas: replicas,
    observedGeneration: 1,
  };
  return made;
}

async function setup(d: BasicDeployment, ...sets: BasicReplicaSet[]) {
  const cluster = new FakeCluster();
  cluster.seed(BASIC_DEPLOYMENT, d);
  cluster.seed(BASIC_REPLICA_SET, ...sets);
  return harness<BasicDeployment>(cluster, { for: BASIC_DEPLOYMENT }, async (c, events) => {
    const revisions = new RevisionWriter({
      client: c.kubeClient,
      onError: (key, err) => assert.fail(`revision write of ${key} failed: ${err}`),
    });
    const reconciler = new BasicDeploymentReconciler({
      client: c.kubeClient,
      deployments: await c.informer(BASIC_DEPLOYMENT),
      sets: await c.informer(BASIC_REPLICA_SET),
      events: eventsFor(events, CONTROLLER_NAME, BASIC_DEPLOYMENT),
      revisions,
    });
    // The revision goes in the background: each step here ends once it is written.
    return {
      reconcile: async (request, ctx) => {
        const result = await reconciler.reconcile(request, ctx);
        await revisions.drain();
        return result;
      },
    };
  });
}

const sets = (h: Harness<BasicDeployment>) => h.cluster.server.list(BASIC_REPLICA_SET, { namespace: 'ns' });
const replicasOf = (h: Harness<BasicDeployment>) =>
  Object.fromEntries(sets(h).map((s) => [s.metadata.name, s.spec.replicas]));
const progressing = (h: Harness<BasicDeployment>) =>
  findCondition(h.status.last('web')?.conditions, 'Progressing');

/**
 * What the BasicReplicaSet controller reports a step later: each set has the pods it wants, those it
 * had a step ago are available, and those it gave up are terminating for this one step.
 */
async function advanceSets(h: Harness<BasicDeployment>): Promise<void> {
  for (const s of sets(h)) {
    const want = s.spec.replicas ?? 1;
    const had = s.status?.replicas ?? 0;
    h.cluster.server.patch(BASIC_REPLICA_SET, {
      namespace: 'ns',
      name: s.metadata.name ?? '',
      patchType: 'merge',
      subresource: 'status',
      body: {
        status: {
          replicas: want,
          activeReplicas: want,
          readyReplicas: Math.min(want, had),
          availableReplicas: Math.min(want, had),
          terminatingReplicas: Math.max(0, had - want),
          observedGeneration: s.metadata.generation,
        },
      },
    });
  }
  await h.cluster.sync();
}

/** Reconciles and lets the sets follow until the deployment reports Ready; `check` sees every step. */
async function rollOut(h: Harness<BasicDeployment>, check: (all: BasicReplicaSet[]) => void = () => {}) {
  for (let step = 1; step <= 40; step++) {
    await h.reconcile('web');
    if (h.status.last('web')?.ready) return step;
    await advanceSets(h);
    check(sets(h));
  }
  assert.fail('the rollout did not complete in 40 steps');
}

const sum = (all: BasicReplicaSet[], pick: (s: BasicReplicaSet) => number | undefined) =>
  all.reduce((n, s) => n + (pick(s) ?? 0), 0);

describe('BasicDeploymentReconciler', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: NOW }));
  afterEach(() => mock.timers.reset());

  it('first reconcile: creates the set of the template (hash, revision 1) and records the revision', async () => {
    const d = deployment();
    const h = await setup(d);
    const hash = hashOf(d);
    assert.deepEqual(
      await h.reconcile('web'),
      { requeueAfterMs: 601_000 },
      'looks again at the progress deadline',
    );
    assert.deepEqual(h.client.writeSummary(), [
      `create BasicReplicaSet web-${hash}`,
      'patch BasicDeployment web',
    ]);
    const [create, patch] = h.client.writes();
    const created = create?.body as BasicReplicaSet;
    assert.equal(created.spec.replicas, 3);
    assert.deepEqual(created.spec.selector.matchLabels, { app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash });
    assert.deepEqual(created.metadata.annotations, {
      [REVISION_ANNOTATION]: '1',
      [DESIRED_REPLICAS_ANNOTATION]: '3',
      [MAX_REPLICAS_ANNOTATION]: '4',
    });
    assert.deepEqual(
      created.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller]),
      [['BasicDeployment', 'web', true]],
    );
    assert.deepEqual(patch?.body, { metadata: { annotations: { [REVISION_ANNOTATION]: '1' } } });
    assert.deepEqual(h.eventSummary(), ['Normal ScalingReplicaSet']);
    assert.equal(progressing(h)?.reason, 'NewReplicaSetCreated');
    assert.equal(h.status.last('web')?.ready, false);
  });

  it('reads revisions as int64 (strconv.ParseInt): the set after revision 3546343826724305832 is 3546343826724305833', async () => {
    // deployment.go:107: an adopted set carries a revision above 2^53; Number would round it.
    const adopted = setOf('1', 1, 1, MINUTE);
    adopted.metadata.annotations![REVISION_ANNOTATION] = '3546343826724305832';
    const h = await setup(deployment({ replicas: 1, template: template('2') }), adopted);
    await h.reconcile('web');
    const created = h.client.writes({ verb: 'create' })[0]?.body as BasicReplicaSet;
    assert.equal(created.metadata.annotations?.[REVISION_ANNOTATION], '3546343826724305833');
    assert.equal(
      h.cluster.server.get(BASIC_DEPLOYMENT, 'ns', 'web').metadata.annotations?.[REVISION_ANNOTATION],
      '3546343826724305833',
    );
    assert.deepEqual(
      h.events.events.map((e) => e.note).filter((n) => n?.startsWith('Created')),
      [`Created BasicReplicaSet ${setName('2')} with 1 replicas (revision 3546343826724305833)`],
    );
  });

  it('skips a revision above int64 max like an unparsable one (upstream MaxRevision)', async () => {
    const beyond = setOf('1', 0, 1, 2 * MINUTE);
    beyond.metadata.annotations![REVISION_ANNOTATION] = '9223372036854775808';
    const h = await setup(
      deployment({ replicas: 1, template: template('3') }),
      beyond,
      setOf('2', 1, 4, MINUTE),
    );
    await h.reconcile('web');
    const created = h.client.writes({ verb: 'create' })[0]?.body as BasicReplicaSet;
    assert.equal(created.metadata.annotations?.[REVISION_ANNOTATION], '5');
  });

  it('the revision after 9223372036854775806 is int64 max, exactly', async () => {
    const top = setOf('1', 1, 1, MINUTE);
    top.metadata.annotations![REVISION_ANNOTATION] = '9223372036854775806';
    const h = await setup(deployment({ replicas: 1, template: template('2') }), top);
    await h.reconcile('web');
    const created = h.client.writes({ verb: 'create' })[0]?.body as BasicReplicaSet;
    assert.equal(created.metadata.annotations?.[REVISION_ANNOTATION], '9223372036854775807');
  });

  it('after int64 max the revision wraps as in Go, so the new set gets no revision annotation', async () => {
    const top = setOf('1', 1, 1, MINUTE);
    top.metadata.annotations![REVISION_ANNOTATION] = '9223372036854775807';
    const h = await setup(deployment({ replicas: 1, template: template('2') }), top);
    await h.reconcile('web');
    const created = h.client.writes({ verb: 'create' })[0]?.body as BasicReplicaSet;
    assert.equal(created.metadata.annotations?.[REVISION_ANNOTATION], undefined);
  });

  it("a set carries the template's labels as they are (a user's managed-by: Helm stays) plus the hash", async () => {
    const labels = { app: 'helm', 'app.kubernetes.io/managed-by': 'Helm' };
    const d = deployment({ replicas: 0, selector: { matchLabels: labels }, template: template('1', labels) });
    const h = await setup(d);
    await h.reconcile('web');
    const created = h.client.writes({ verb: 'create' })[0]?.body as BasicReplicaSet;
    const expected = { ...labels, [POD_TEMPLATE_HASH_LABEL]: hashOf(d) };
    assert.deepEqual(created.metadata.labels, expected);
    assert.deepEqual(created.spec.template.metadata?.labels, expected);
    assert.deepEqual(created.spec.selector.matchLabels, expected);
  });

  it('rolling update of 10 with maxSurge 2, maxUnavailable 1: never more than 12 pods wanted or fewer than 9 available', async () => {
    const strategy: Spec['strategy'] = {
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: 2, maxUnavailable: 1 },
    };
    const h = await setup(
      deployment({ replicas: 10, strategy, template: template('2') }, { [REVISION_ANNOTATION]: '1' }),
      setOf('1', 10, 1, MINUTE),
    );
    let most = 0;
    let fewestAvailable = Number.POSITIVE_INFINITY;
    const steps = await rollOut(h, (all) => {
      most = Math.max(
        most,
        sum(all, (s) => s.spec.replicas),
      );
      fewestAvailable = Math.min(
        fewestAvailable,
        sum(all, (s) => s.status?.availableReplicas),
      );
    });
    assert.ok(steps > 5, `a rollout in several steps (${steps})`);
    assert.ok(most <= 12, `at most 12 pods wanted, saw ${most}`);
    assert.ok(fewestAvailable >= 9, `at least 9 available, saw ${fewestAvailable}`);
    assert.deepEqual(replicasOf(h), { [setName('1')]: 0, [setName('2')]: 10 });
    const created = h.client.writes({ verb: 'create' });
    assert.deepEqual(
      created.map((a) => (a.body as BasicReplicaSet).metadata.annotations?.[REVISION_ANNOTATION]),
      ['2'],
    );
    assert.equal(progressing(h)?.reason, 'NewReplicaSetAvailable');
    const recorded = h.cluster.server.get(BASIC_DEPLOYMENT, 'ns', 'web').metadata.annotations;
    assert.equal(recorded?.[REVISION_ANNOTATION], '2', 'the new revision is recorded on the deployment');
    for (const scale of h.client.writes({ verb: 'update', kind: 'BasicReplicaSet' })) {
      const body = scale.body as BasicReplicaSet;
      assert.ok(body.metadata.resourceVersion, 'each scale carries the resourceVersion read');
      assert.equal(body.metadata.annotations?.[DESIRED_REPLICAS_ANNOTATION], '10');
      assert.equal(body.metadata.annotations?.[MAX_REPLICAS_ANNOTATION], '12');
    }
  });

  it('Recreate: the old set goes to 0 first, the new set comes only once no old pod is left', async () => {
    const h = await setup(
      deployment({ replicas: 4, strategy: { type: 'Recreate' }, template: template('2') }),
      setOf('1', 4, 1, MINUTE),
    );
    await h.reconcile('web');
    assert.deepEqual(h.client.writeSummary({ kind: 'BasicReplicaSet' }), [
      `update BasicReplicaSet ${setName('1')}`,
    ]);
    assert.deepEqual(replicasOf(h), { [setName('1')]: 0 });
    await rollOut(h, (all) => {
      const old = all.find((s) => s.metadata.name === setName('1'));
      const fresh = all.find((s) => s.metadata.name === setName('2'));
      const oldPods = (old?.status?.replicas ?? 0) + (old?.status?.terminatingReplicas ?? 0);
      assert.ok(oldPods === 0 || (fresh?.spec.replicas ?? 0) === 0, 'old and new pods never coexist');
    });
    assert.deepEqual(replicasOf(h), { [setName('1')]: 0, [setName('2')]: 4 });
  });

  it('paused: a template change waits, scaling still applies', async () => {
    const h = await setup(
      deployment({ replicas: 3, paused: true, template: template('2') }, { [REVISION_ANNOTATION]: '1' }),
      setOf('1', 2, 1, MINUTE),
    );
    assert.equal(await h.reconcile('web'), undefined, 'no deadline while paused');
    assert.deepEqual(h.client.writeSummary(), [`update BasicReplicaSet ${setName('1')}`], 'no new set');
    assert.deepEqual(replicasOf(h), { [setName('1')]: 3 });
    assert.equal(progressing(h)?.status, 'Unknown');
    assert.equal(progressing(h)?.reason, 'DeploymentPaused');
    assert.equal(h.status.last('web')?.ready, false);
  });

  it('scales a rollout under way proportionally: both sets grow, within maxSurge', async () => {
    const newer = setOf('2', 5, 2);
    const older = setOf('1', 5, 1, MINUTE);
    for (const s of [newer, older]) {
      s.metadata.annotations![DESIRED_REPLICAS_ANNOTATION] = '10';
      s.metadata.annotations![MAX_REPLICAS_ANNOTATION] = '13';
    }
    const h = await setup(
      deployment({ replicas: 20, template: template('2') }, { [REVISION_ANNOTATION]: '2' }),
      newer,
      older,
    );
    await h.reconcile('web');
    const after = replicasOf(h);
    assert.equal(h.client.writes({ verb: 'update', kind: 'BasicReplicaSet' }).length, 2);
    assert.equal((after[setName('1')] ?? 0) + (after[setName('2')] ?? 0), 25, '20 plus a 25% surge');
    assert.ok((after[setName('1')] ?? 0) > 5 && (after[setName('2')] ?? 0) > 5, JSON.stringify(after));
    assert.deepEqual(h.client.writes({ verb: 'create' }), []);
  });

  describe('history', () => {
    const history = () => [
      setOf('1', 0, 1, 4 * MINUTE),
      setOf('2', 0, 2, 3 * MINUTE),
      setOf('3', 0, 3, 2 * MINUTE),
    ];

    it('keeps only revisionHistoryLimit old sets once the rollout is complete, deleting the oldest by uid', async () => {
      const d = deployment(
        { replicas: 1, revisionHistoryLimit: 1, template: template('4') },
        { [REVISION_ANNOTATION]: '4' },
      );
      const h = await setup(d, setOf('4', 1, 4, MINUTE), ...history());
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary(), [
        `delete BasicReplicaSet ${setName('1')}`,
        `delete BasicReplicaSet ${setName('2')}`,
      ]);
      assert.deepEqual(h.client.writes()[0]?.body, { preconditions: { uid: `uid-${setName('1')}` } });
    });

    it('trims nothing in the middle of a rollout', async () => {
      const d = deployment(
        { replicas: 1, revisionHistoryLimit: 1, template: template('4') },
        { [REVISION_ANNOTATION]: '4' },
      );
      const current = setOf('4', 1, 4, MINUTE);
      current.status = { ...current.status, availableReplicas: 0 };
      const h = await setup(d, current, ...history());
      await h.reconcile('web');
      assert.deepEqual(h.client.writes({ verb: 'delete' }), []);
    });

    it('trims history while paused, even with a template change waiting; the running set stays', async () => {
      const d = deployment({ replicas: 1, paused: true, revisionHistoryLimit: 0, template: template('3') });
      const h = await setup(d, setOf('2', 1, 2, MINUTE), setOf('1', 0, 1, 2 * MINUTE));
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary(), [`delete BasicReplicaSet ${setName('1')}`]);
    });
  });

  it('a set name taken by another template bumps collisionCount through the status and rolls out under the next hash', async () => {
    const d = deployment({ replicas: 1 });
    const squatter = setOf('9', 0, 1);
    squatter.metadata = { name: `web-${hashOf(d)}`, namespace: 'ns', labels: { app: 'squatter' } };
    const h = await setup(d, squatter);

    assert.deepEqual(await h.reconcile('web'), { requeue: true });
    assert.deepEqual(
      h.client.actions.map((a) => `${a.verb} ${a.kind} ${a.name} ${a.error?.reason ?? ''}`.trim()),
      [`create BasicReplicaSet web-${hashOf(d)} AlreadyExists`, `get BasicReplicaSet web-${hashOf(d)}`],
    );
    assert.equal(h.status.last('web')?.collisionCount, 1);

    h.client.clearActions();
    await h.reconcile('web'); // the cache has not seen the status: latest() has the count
    assert.deepEqual(h.client.writeSummary({ verb: 'create' }), [
      `create BasicReplicaSet web-${hashOf(d, 1)}`,
    ]);
    assert.equal(h.status.last('web')?.collisionCount, 1);
    const untouched = h.cluster.server.get(BASIC_REPLICA_SET, 'ns', `web-${hashOf(d)}`);
    assert.equal(untouched.metadata.ownerReferences, undefined, 'the other set is left alone');
  });

  it('pods that never become available: Progressing, then ProgressDeadlineExceeded, and no requeue after it', async () => {
    const h = await setup(deployment({ replicas: 2, progressDeadlineSeconds: 3 }));
    assert.deepEqual(await h.reconcile('web'), { requeueAfterMs: 4000 });
    assert.equal(progressing(h)?.status, 'True');
    await advanceSets(h); // pods exist, never ready
    mock.timers.tick(1000);
    assert.deepEqual(await h.reconcile('web'), { requeueAfterMs: 4000 }, 'progress: the deadline moves');
    assert.equal(progressing(h)?.reason, 'ReplicaSetUpdated');

    mock.timers.tick(4000);
    assert.equal(await h.reconcile('web'), undefined);
    assert.equal(progressing(h)?.status, 'False');
    assert.equal(progressing(h)?.reason, 'ProgressDeadlineExceeded');
    assert.equal(h.status.last('web')?.ready, false);
    assert.equal(findCondition(h.status.last('web')?.conditions, 'Ready')?.status, 'False');
  });

  it('a paused deployment past its progress deadline is not requeued and stays DeploymentPaused', async () => {
    const d = deployment({ replicas: 1, paused: true, progressDeadlineSeconds: 5, template: template('2') });
    d.status = {
      lastProgressTime: new Date(NOW - 10 * MINUTE).toISOString(),
      conditions: [
        {
          type: 'Progressing',
          status: 'Unknown',
          reason: 'DeploymentPaused',
          message: 'Deployment is paused',
          lastTransitionTime: new Date(NOW - 10 * MINUTE).toISOString(),
        },
      ],
    };
    const h = await setup(d, setOf('1', 1, 1, MINUTE));
    assert.equal(await h.reconcile('web'), undefined);
    assert.equal(progressing(h)?.reason, 'DeploymentPaused');
    assert.deepEqual(h.client.writes({ verb: 'create' }), []);
  });

  it('rolls back to an earlier template by reusing its set, which becomes the newest revision', async () => {
    const h = await setup(
      deployment({ replicas: 2, template: template('1') }, { [REVISION_ANNOTATION]: '2' }),
      setOf('1', 0, 1, 2 * MINUTE),
      setOf('2', 2, 2, MINUTE),
    );
    await rollOut(h);
    assert.deepEqual(h.client.writes({ verb: 'create' }), [], 'no third set');
    assert.deepEqual(
      h.eventSummary().filter((e) => e.endsWith('DeploymentRollback')),
      ['Normal DeploymentRollback'],
    );
    assert.deepEqual(replicasOf(h), { [setName('1')]: 2, [setName('2')]: 0 });
    const reused = h.cluster.server.get(BASIC_REPLICA_SET, 'ns', setName('1'));
    assert.equal(reused.metadata.annotations?.[REVISION_ANNOTATION], '3');
    assert.equal(
      h.cluster.server.get(BASIC_DEPLOYMENT, 'ns', 'web').metadata.annotations?.[REVISION_ANNOTATION],
      '3',
    );
  });

  it('a rollback takes the reused set up to the newest revision before scaling it, in one reconcile without a conflict', async () => {
    const h = await setup(
      deployment({ replicas: 2, template: template('1') }, { [REVISION_ANNOTATION]: '2' }),
      setOf('1', 0, 0, 2 * MINUTE),
      setOf('2', 2, 2, MINUTE),
    );
    const result = await h.reconcile('web');
    // A 409 on the second write to the set would end this reconcile with the 1 s conflict requeue.
    assert.notDeepEqual(result, { requeueAfterMs: 1000 });
    const reused = h.cluster.server.get(BASIC_REPLICA_SET, 'ns', setName('1'));
    assert.equal(reused.metadata.annotations?.[REVISION_ANNOTATION], '3');
    assert.ok((reused.spec.replicas ?? 0) > 0, 'scaled up in the same reconcile');
  });

  it('keeps the current set in line (minReadySeconds, annotations) and records its revision on the deployment', async () => {
    const h = await setup(
      deployment({ replicas: 1, minReadySeconds: 2 }, { team: 'payments' }),
      setOf('1', 1, 1, MINUTE),
    );
    await h.reconcile('web');
    assert.deepEqual(h.client.writeSummary(), [
      `patch BasicReplicaSet ${setName('1')}`,
      'patch BasicDeployment web',
    ]);
    const [toSet, toDeployment] = h.client.writes();
    assert.deepEqual(toSet?.body, {
      metadata: { annotations: { team: 'payments' }, resourceVersion: '2' },
      spec: { minReadySeconds: 2 },
    });
    assert.deepEqual(toDeployment?.body, { metadata: { annotations: { [REVISION_ANNOTATION]: '1' } } });
    assert.deepEqual(h.client.writes({ verb: 'create' }), [], 'neither change makes a new set');
  });

  it('records the revision on the deployment once, though woken again before the cache shows that write', async () => {
    const h = await setup(deployment({ replicas: 3 }), setOf('1', 3, 1, MINUTE));
    await h.reconcile('web');
    // A set's status event woke it; the deployment's own update is still on its way.
    await h.reconcile('web');
    assert.deepEqual(h.client.writeSummary({ kind: 'BasicDeployment' }), ['patch BasicDeployment web']);
    await h.cluster.sync();
    await h.reconcile('web');
    assert.deepEqual(h.client.writeSummary({ kind: 'BasicDeployment' }), ['patch BasicDeployment web']);
    assert.equal(
      h.cluster.server.get(BASIC_DEPLOYMENT, 'ns', 'web').metadata.annotations?.[REVISION_ANNOTATION],
      '1',
    );
  });

  it('adopts a matching orphan set after a live read of the deployment, and releases a set that stopped matching', async () => {
    const current = setOf('1', 3, 1, MINUTE);
    current.metadata.labels = { ...current.metadata.labels, app: 'released' };
    const stray = setOf('9', 0, 1, 2 * MINUTE);
    stray.metadata = { name: 'stray', namespace: 'ns', labels: { app: 'web', extra: 'orphan' } };
    const h = await setup(deployment({}, { [REVISION_ANNOTATION]: '1' }), current, stray);
    await h.reconcile('web');
    const adopted = h.cluster.server.get(BASIC_REPLICA_SET, 'ns', 'stray');
    assert.deepEqual(
      adopted.metadata.ownerReferences?.map((r) => r.name),
      ['web'],
    );
    const released = h.cluster.server.get(BASIC_REPLICA_SET, 'ns', setName('1'));
    assert.equal(released.metadata.ownerReferences, undefined);
    assert.ok(
      h.client.actions.some((a) => a.verb === 'get' && a.kind === 'BasicDeployment'),
      'a live read first',
    );
    assert.deepEqual(
      h.client.writes({ verb: 'create' }).map((a) => a.name),
      [setName('1')],
      'the released set is no longer its own: one is made for the template',
    );
  });

  it('an invalid spec: InvalidSpec as a Warning and in the status, no writes, no requeue', async () => {
    const h = await setup(
      deployment({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } } }),
    );
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writes(), []);
    assert.deepEqual(h.eventSummary(), ['Warning InvalidSpec']);
    assert.equal(progressing(h)?.status, 'False');
    assert.equal(progressing(h)?.reason, 'InvalidSpec');
    assert.equal(findCondition(h.status.last('web')?.conditions, 'Ready')?.reason, 'InvalidSpec');
  });

  it('a template nested deeper than any pod spec: InvalidSpec, its sets left alone', async () => {
    // 1,000 levels, which the fake cluster's copies still take (structuredClone overflows Node's stack
    // near 3,000); canonicalJson's own test walks 10,000.
    let nested: unknown = 'x';
    for (let i = 0; i < 1000; i++) nested = { a: nested };
    const deep = template('1');
    (deep.spec as unknown as Record<string, unknown>).extra = nested;
    const h = await setup(deployment({ template: deep }), setOf('1', 3, 1, MINUTE));
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writes(), []);
    assert.deepEqual(h.eventSummary(), ['Warning InvalidSpec']);
    assert.equal(progressing(h)?.reason, 'InvalidSpec');
    assert.match(progressing(h)?.message ?? '', /spec\.template: nested more than 100 levels deep/);
  });

  it('a set changed under it (409 on a scale) is waited for, not an error', async () => {
    const h = await setup(
      deployment({ replicas: 5 }, { [REVISION_ANNOTATION]: '1' }),
      setOf('1', 3, 1, MINUTE),
    );
    h.client.fail(
      { verb: 'update', kind: 'BasicReplicaSet' },
      new ApiError(
        409,
        'Conflict',
        'the object has been modified; please apply your changes to the latest version',
      ),
    );
    assert.deepEqual(await h.reconcile('web'), { requeueAfterMs: 1000 });
  });
});

describe('BasicDeploymentReconciler: a scale-up of a settled deployment', () => {
  /** Scales web from 3 to 4; `before` runs first (another writer's change to the set, say). */
  async function scaledUp(before?: (h: Harness<BasicDeployment>) => void) {
    const h = await setup(
      deployment({ replicas: 3 }, { [REVISION_ANNOTATION]: '1' }),
      setOf('1', 3, 1, MINUTE),
    );
    before?.(h);
    h.cluster.server.patch(BASIC_DEPLOYMENT, {
      namespace: 'ns',
      name: 'web',
      patchType: 'merge',
      body: { spec: { replicas: 4 } },
    });
    await h.cluster.sync();
    await h.reconcile('web');
    assert.deepEqual(h.client.writeSummary({ kind: 'BasicReplicaSet' }), [
      `update BasicReplicaSet ${setName('1')}`,
    ]);
    return h;
  }

  it('scales its set once; the reconciles its own write and the set status wake write no set again', async () => {
    const h = await scaledUp();
    await h.cluster.sync();
    await h.reconcile('web');
    await advanceSets(h);
    await h.reconcile('web');
    assert.deepEqual(h.client.writeSummary({ kind: 'BasicReplicaSet' }), [
      `update BasicReplicaSet ${setName('1')}`,
    ]);
  });

  it('scales with an update of the set as read: what others wrote on it stays', async () => {
    let before: BasicReplicaSet | undefined;
    const h = await scaledUp((h) => {
      h.cluster.server.patch(BASIC_REPLICA_SET, {
        namespace: 'ns',
        name: setName('1'),
        patchType: 'merge',
        body: { metadata: { annotations: { 'example.com/owner': 'team-a' }, labels: { tier: 'web' } } },
      });
      before = h.cluster.server.get(BASIC_REPLICA_SET, 'ns', setName('1'));
    });
    const after = h.cluster.server.get(BASIC_REPLICA_SET, 'ns', setName('1'));
    assert.equal(after.spec.replicas, 4);
    assert.equal(after.metadata.annotations?.['example.com/owner'], 'team-a');
    assert.equal(after.metadata.annotations?.[DESIRED_REPLICAS_ANNOTATION], '4');
    assert.equal(after.metadata.labels?.tier, 'web');
    assert.deepEqual(after.spec.template, before?.spec.template);
    assert.deepEqual(after.status, before?.status);
    const scales = h.client.writes({ verb: 'update', kind: 'BasicReplicaSet' });
    assert.equal(scales.length, 1);
    assert.equal(
      (scales[0]?.body as BasicReplicaSet | undefined)?.status,
      undefined,
      'no status sent with the scale',
    );
  });

  it('woken before the cache shows its scale, it waits for that event instead of scaling again (409)', async () => {
    const h = await scaledUp();
    // Another event woke it; the set's own update is still on its way.
    assert.deepEqual(await h.reconcile('web'), { requeueAfterMs: 1000 });
    assert.deepEqual(h.client.writeSummary({ kind: 'BasicReplicaSet' }), [
      `update BasicReplicaSet ${setName('1')}`,
    ]);
    await h.cluster.sync();
    await h.reconcile('web');
    assert.deepEqual(h.client.writeSummary({ kind: 'BasicReplicaSet' }), [
      `update BasicReplicaSet ${setName('1')}`,
    ]);
    assert.deepEqual(replicasOf(h), { [setName('1')]: 4 });
  });
});
