import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap, V1Lease } from '@kubernetes/client-node';
import { testClient, testCluster, testKubeConfig } from '../../../e2e/support/cluster.ts';
import { httpGet } from '../../../e2e/support/http.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { MANAGER_LOG, type OperatorProcess } from '../../../e2e/support/operator-process.ts';
import { parseMetrics, value } from '../../../e2e/support/prometheus-text.ts';
import { readQueue } from '../../../e2e/support/queue-metrics.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import { Informer } from '../../../src/runtime/cache/informer.ts';
import { KubeClient, type WriteOptions } from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../../../src/runtime/client/resource.ts';
import { LeaderElector } from '../../../src/runtime/manager/leader-election.ts';
import {
  fixtureFlags,
  fixtureIdentity,
  LEASE_READ,
  MARKER_ANNOTATION,
  startFixture,
} from '../../support/fixture-operator.ts';
import { testLogger } from '../../support/log.ts';

/**
 * Leader election between real operator processes (test/support/fixture-operator.ts) with the
 * default lease timings (15 s lease, 10 s renew deadline, 2 s retry period).
 */

const markerConfigMap = (namespace: string, name: string): V1ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, labels: { test: 'marker' } },
});

/** Appends `value` unless it repeats the last entry. */
function record(history: string[], value: string): void {
  if (history.at(-1) !== value) history.push(value);
}

async function masterStatus(process: OperatorProcess, leaseName: string): Promise<number> {
  const { metrics } = await process.ports();
  const { body } = await httpGet(metrics, '/metrics');
  return value(parseMetrics(body), 'leader_election_master_status', { name: leaseName });
}

/** Counts the Lease reads and writes sent, and holds the next write until open() is called. */
class GatedClient extends KubeClient {
  #gate: Promise<void> | undefined;
  #open: (() => void) | undefined;
  #entered: (() => void) | undefined;
  /** Lease reads sent so far. */
  leaseReads = 0;
  /** Lease updates sent so far (renewals and the release), a held one included. */
  leaseUpdates = 0;
  /**
   * Lease updates that failed (a conflict, or a timeout on a loaded machine): a failed renewal as
   * last written is followed by a read, which is right, so tests allow one read per failure.
   */
  leaseUpdateFailures = 0;

  /** Arms the gate; resolves once a Lease update is waiting at it. */
  holdNextLeaseUpdate(): Promise<void> {
    this.#gate = new Promise((resolve) => {
      this.#open = resolve;
    });
    return new Promise((resolve) => {
      this.#entered = resolve;
    });
  }

  open(): void {
    this.#open?.();
    this.#gate = undefined;
  }

  override get<T extends KubeObject>(
    type: ResourceType<T>,
    namespace: string | undefined,
    name: string,
    signal?: AbortSignal,
  ): Promise<T> {
    if (type.kind === 'Lease') this.leaseReads++;
    return super.get<T>(type, namespace, name, signal);
  }

  override async update<T extends KubeObject>(
    type: ResourceType<T>,
    obj: T,
    options?: WriteOptions,
  ): Promise<T> {
    if (type.kind === 'Lease') {
      this.leaseUpdates++;
      const gate = this.#gate;
      if (gate) {
        this.#gate = undefined;
        this.#entered?.();
        await gate;
      }
    }
    if (type.kind !== 'Lease') return super.update<T>(type, obj, options);
    try {
      return await super.update<T>(type, obj, options);
    } catch (err) {
      this.leaseUpdateFailures++;
      throw err;
    }
  }
}

const WAIT = { timeoutMs: 5_000, intervalMs: 20 };

/** An elector on a fresh lease with short timings, started; resolves once it leads. */
async function leadingElector(client: KubeClient, namespace: string, identity: string) {
  const leaseName = `${identity}-${randomBytes(3).toString('hex')}`;
  const elector = new LeaderElector(
    client,
    {
      namespace,
      name: leaseName,
      identity,
      leaseDurationMs: 3_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 200,
    },
    testLogger(),
  );
  const stop = new AbortController();
  let leading!: () => void;
  const started = new Promise<void>((resolve) => {
    leading = resolve;
  });
  let lost = false;
  const running = elector.run(stop.signal, {
    onStartedLeading: leading,
    onStoppedLeading: () => {
      lost = true;
    },
  });
  await started;
  return { elector, leaseName, stop, running, lost: () => lost };
}

describe('leader election between operator processes', () => {
  let client: KubeClient;
  let ns: string;
  let kubeconfig: string;
  const processes: OperatorProcess[] = [];
  const stopInformers = new AbortController();

  before(async () => {
    client = await testClient();
    kubeconfig = (await testCluster()).kubeconfig;
    ns = await createNamespace(client, 'leader');
  });
  after(async () => {
    await Promise.all(processes.map((p) => p.stop({ signal: 'SIGKILL' })));
    stopInformers.abort();
    await deleteNamespace(client, ns);
  });

  it('lets only the lease holder reconcile, fails over after SIGKILL and hands over at once on SIGTERM', {
    timeout: 120_000,
  }, async (t) => {
    const leaseName = `marker-${randomBytes(3).toString('hex')}`;
    const flags = [
      ...fixtureFlags(kubeconfig, ns),
      '--leader-elect',
      '--leader-election-id',
      leaseName,
      '--leader-election-namespace',
      ns,
    ];
    const start = (name: string) => {
      const p = startFixture(name, flags);
      processes.push(p);
      return p;
    };

    // Everything either replica ever writes, and every holder the Lease ever names, as watched.
    const marks = new Map<string, string[]>();
    const configMaps = new Informer<V1ConfigMap>(
      client,
      CoreTypes.ConfigMap,
      { namespaces: [ns], labelSelector: 'test=marker' },
      testLogger(),
    );
    const noteMark = (cm: V1ConfigMap) => {
      const mark = cm.metadata?.annotations?.[MARKER_ANNOTATION];
      const name = cm.metadata?.name ?? '';
      if (mark !== undefined) record(marks.get(name) ?? marks.set(name, []).get(name)!, mark);
    };
    configMaps.addHandler({ onAdd: noteMark, onUpdate: (_old, cm) => noteMark(cm) });
    const holders: string[] = [];
    const leases = new Informer<V1Lease>(client, CoreTypes.Lease, { namespaces: [ns] }, testLogger());
    const noteHolder = (lease: V1Lease) => {
      if (lease.metadata?.name === leaseName) record(holders, lease.spec?.holderIdentity ?? '');
    };
    leases.addHandler({ onAdd: noteHolder, onUpdate: (_old, lease) => noteHolder(lease) });
    configMaps.start(stopInformers.signal);
    leases.start(stopInformers.signal);
    await waitFor('the test informers to sync', () => configMaps.hasSynced && leases.hasSynced);
    const markOf = (name: string) => configMaps.get(ns, name)?.metadata?.annotations?.[MARKER_ANNOTATION];
    const holder = async () =>
      (await client.get<V1Lease>(CoreTypes.Lease, ns, leaseName)).spec?.holderIdentity ?? '';

    const names = ['before-0', 'before-1', 'before-2'];
    for (const name of names) await client.create(CoreTypes.ConfigMap, markerConfigMap(ns, name));
    const a = start('replica-a');
    const b = start('replica-b');
    const [idA, idB] = await Promise.all([fixtureIdentity(a), fixtureIdentity(b)]);

    // 1. One replica reconciles everything; the other nothing.
    const leaderId = await waitFor(
      'every configmap to be marked by one replica',
      () => {
        const found = new Set(names.map(markOf));
        const [only] = found;
        return found.size === 1 && only !== undefined ? only : undefined;
      },
      { timeoutMs: 30_000 },
    );
    const [leader, standby, standbyId] = leaderId === idA ? [a, b, idB] : [b, a, idA];
    assert.ok(leaderId === idA || leaderId === idB, `marked by an unknown identity ${leaderId}`);
    assert.equal(await holder(), leaderId, 'the Lease names the replica that reconciles');
    // The standby had all it needs to reconcile: its caches synced, then two polls that found the
    // lease held. A poll comes a retry period after the one before, which it has acted on by then.
    const { health: standbyHealth, metrics: standbyMetrics } = await standby.ports();
    await standby.waitForHttp('ready (caches synced)', standbyHealth, '/readyz');
    const readyAt = standby.logs.length;
    await waitFor(
      'the standby to poll the lease twice once ready',
      () =>
        standby.logs.slice(readyAt).filter((l) => l.message === LEASE_READ && l.holder === leaderId).length >=
        2,
      { timeoutMs: 15_000 },
    );
    const leaderQueue = await readQueue((await leader.ports()).metrics, 'marker');
    assert.ok(leaderQueue.adds >= names.length, `the leader queued them: ${JSON.stringify(leaderQueue)}`);
    assert.equal((await readQueue(standbyMetrics, 'marker')).adds, 0, 'the standby queued nothing');
    for (const name of names)
      assert.deepEqual(marks.get(name), [leaderId], `${name} marked only by the leader`);
    assert.equal(await masterStatus(leader, leaseName), 1, 'leader_election_master_status on the leader');
    assert.equal(await masterStatus(standby, leaseName), 0, 'leader_election_master_status on the standby');

    // 2. SIGKILL: the lease is not released, so the standby waits for it to expire, then takes over.
    const killedAt = Date.now();
    leader.kill('SIGKILL');
    await client.create(CoreTypes.ConfigMap, markerConfigMap(ns, 'after-kill'));
    await waitFor(
      'the standby to reconcile after the leader died',
      () => markOf('after-kill') === standbyId,
      {
        timeoutMs: 30_000,
        intervalMs: 50,
      },
    );
    const takeoverMs = Date.now() - killedAt;
    t.diagnostic(`takeover after SIGKILL of the leader: ${takeoverMs} ms`);
    // A 15 s lease, seen renewed up to one jittered 2 s retry after the kill, one more retry to
    // take it, then caches and a reconcile: 22 s bounds it with room for a slow machine.
    assert.ok(takeoverMs < 22_000, `takeover took ${takeoverMs} ms`);
    assert.deepEqual(marks.get('after-kill'), [standbyId]);
    assert.equal((await leader.exited).signal, 'SIGKILL');
    assert.equal(await holder(), standbyId);
    assert.equal(await masterStatus(standby, leaseName), 1);

    // 3. SIGTERM with a third replica waiting: the lease is released on the way out, so the hand-over
    //    takes at most one retry period instead of a lease duration.
    const third = start('replica-c');
    const idC = await fixtureIdentity(third);
    const { health } = await third.ports();
    await third.waitForHttp('ready (caches synced)', health, '/readyz');
    assert.equal(await masterStatus(third, leaseName), 0);
    const terminatedAt = Date.now();
    standby.kill('SIGTERM');
    await client.create(CoreTypes.ConfigMap, markerConfigMap(ns, 'after-term'));
    await waitFor('the third replica to reconcile', () => markOf('after-term') === idC, {
      timeoutMs: 20_000,
      intervalMs: 50,
    });
    const handoverMs = Date.now() - terminatedAt;
    t.diagnostic(`hand-over after SIGTERM of the leader: ${handoverMs} ms`);
    // Far below the 15 s lease: the released lease is taken at the next retry (2 s, jittered).
    assert.ok(handoverMs < 8_000, `hand-over took ${handoverMs} ms`);
    const exit = await standby.exited;
    assert.equal(exit.code, 0, `the SIGTERMed replica exits 0\n${standby.describe()}`);
    assert.ok(standby.indexOf(MANAGER_LOG.releasedLease) >= 0, standby.describe());
    await waitFor('the Lease to name the third replica', async () => (await holder()) === idC);
    assert.deepEqual(
      holders,
      [leaderId, standbyId, '', idC],
      'holders: first leader, the standby taking over an expired lease, released (empty), the third replica',
    );
  });

  it('releases the lease for good even when a renewal is in flight', { timeout: 30_000 }, async () => {
    const gated = new GatedClient(await testKubeConfig(), { userAgent: 'basic-operator-tests' });
    const { elector, leaseName, stop, running } = await leadingElector(gated, ns, 'release-test');
    // A renewal writes the Lease as the release starts; its write is held until release() has had
    // its chance to write.
    await gated.holdNextLeaseUpdate();
    const updatesBefore = gated.leaseUpdates;
    const released = elector.release();
    // release() runs up to its first wait: had it not waited for the renewal, it would have sent its
    // update now, and which of the two updates won would be up to the network.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(gated.leaseUpdates, updatesBefore, 'no release while a renewal is in flight');
    gated.open();
    await released;
    stop.abort();
    // Nothing of the elector is left in flight: run() awaits its renewals and has returned.
    await running;
    const lease = await client.get<V1Lease>(CoreTypes.Lease, ns, leaseName);
    assert.equal(lease.spec?.holderIdentity ?? '', '', 'the lease stays released');
  });

  it('renews with one request, the update of the lease as it last wrote it (client-go fast path)', {
    timeout: 30_000,
  }, async () => {
    const counting = new GatedClient(await testKubeConfig(), { userAgent: 'basic-operator-tests' });
    const { leaseName, stop, running, lost } = await leadingElector(counting, ns, 'renew-test');
    const readsBefore = counting.leaseReads;
    const updatesBefore = counting.leaseUpdates;
    const failuresBefore = counting.leaseUpdateFailures;
    const renewTimeBefore = (await client.get<V1Lease>(CoreTypes.Lease, ns, leaseName)).spec?.renewTime;
    await waitFor('5 renewals', () => counting.leaseUpdates - updatesBefore >= 5, WAIT);
    const failures = counting.leaseUpdateFailures - failuresBefore;
    assert.ok(
      counting.leaseReads - readsBefore <= failures,
      `no read of the lease while renewing it, but after a failed renewal (${failures} failed)`,
    );
    const lease = await client.get<V1Lease>(CoreTypes.Lease, ns, leaseName);
    assert.equal(lease.spec?.holderIdentity, 'renew-test');
    assert.notEqual(lease.spec?.renewTime, renewTimeBefore, 'the renewals moved renewTime');
    assert.equal(lost(), false);
    stop.abort();
    await running;
  });

  it('stops leading when another holder took the lease, instead of writing over it', {
    timeout: 30_000,
  }, async () => {
    const counting = new GatedClient(await testKubeConfig(), { userAgent: 'basic-operator-tests' });
    const { leaseName, running, lost } = await leadingElector(counting, ns, 'taken-test');
    await client.patch(CoreTypes.Lease, {
      namespace: ns,
      name: leaseName,
      patchType: 'merge',
      body: {
        spec: { holderIdentity: 'someone-else', renewTime: new Date().toISOString().replace('Z', '000Z') },
      },
    });
    // The next renewal conflicts, reads a lease held by another, and run() returns.
    await running;
    assert.equal(lost(), true, 'onStoppedLeading was called');
    const lease = await client.get<V1Lease>(CoreTypes.Lease, ns, leaseName);
    assert.equal(lease.spec?.holderIdentity, 'someone-else', 'the new holder keeps the lease');
  });

  it('reads the lease when someone else wrote it since, and keeps leading if it is still its own', {
    timeout: 30_000,
  }, async () => {
    const counting = new GatedClient(await testKubeConfig(), { userAgent: 'basic-operator-tests' });
    const { leaseName, stop, running, lost } = await leadingElector(counting, ns, 'conflict-test');
    // Another writer (a user's label) moves the lease's resourceVersion: the next renewal conflicts.
    await client.patch(CoreTypes.Lease, {
      namespace: ns,
      name: leaseName,
      patchType: 'merge',
      body: { metadata: { labels: { touched: 'yes' } } },
    });
    const readsBefore = counting.leaseReads;
    await waitFor('a read after the conflict', () => counting.leaseReads > readsBefore, WAIT);
    const updatesAfterRead = counting.leaseUpdates;
    const failuresAfterRead = counting.leaseUpdateFailures;
    await waitFor('3 renewals', () => counting.leaseUpdates - updatesAfterRead >= 3, WAIT);
    const failures = counting.leaseUpdateFailures - failuresAfterRead;
    const lease = await client.get<V1Lease>(CoreTypes.Lease, ns, leaseName);
    assert.equal(lease.spec?.holderIdentity, 'conflict-test');
    assert.equal(lease.metadata?.labels?.touched, 'yes', "the other writer's change is kept");
    // One read for the conflict, then the fast path again: no more reads unless a renewal failed
    // (timed out under load), which the elector rightly follows with a read.
    assert.ok(
      counting.leaseReads - readsBefore - 1 <= failures,
      `one read, then the fast path again (${counting.leaseReads - readsBefore} reads, ${failures} failed renewals since the first)`,
    );
    assert.equal(lost(), false);
    stop.abort();
    await running;
  });
});
