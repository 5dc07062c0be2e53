import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { testClient, testKubeConfig } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { sleep, waitFor } from '../../../e2e/support/wait.ts';
import {
  BASIC_REPLICA_SET,
  type BasicReplicaSet,
  type BasicReplicaSetStatus,
  MACHINE,
  type Machine,
} from '../../../src/apis/index.ts';
import { ApiError, isInvalid, isPatchTestFailed } from '../../../src/runtime/client/errors.ts';
import { KubeClient, type PatchRequest } from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../../../src/runtime/client/resource.ts';
import type { EventsV1Event } from '../../../src/runtime/events/event-object.ts';
import { ApiEventRecorder } from '../../../src/runtime/events/index.ts';
import { findCondition, setCondition } from '../../../src/runtime/write/conditions.ts';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../../../src/runtime/write/finalizers.ts';
import {
  adopt,
  controllerReference,
  isControlledBy,
  release,
} from '../../../src/runtime/write/owner-refs.ts';
import type { ObjectWithStatus } from '../../../src/runtime/write/status.ts';
import {
  applyOwnedFields,
  replaceWholeStatus,
  type StatusStrategy,
} from '../../../src/runtime/write/status-strategy.ts';
import { BackgroundStatusWriter, DEFAULT_STATUS_BATCH_MS } from '../../../src/runtime/write/status-writer.ts';
import { testLogger } from '../../support/log.ts';

const configMap = (namespace: string, name: string): V1ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, labels: { test: 'writing' } },
});

const replicaSet = (namespace: string, name: string): BasicReplicaSet => ({
  apiVersion: BASIC_REPLICA_SET.apiVersion,
  kind: BASIC_REPLICA_SET.kind,
  metadata: { name, namespace },
  spec: {
    replicas: 0,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10' }] },
    },
  },
});

/** Counts patches and failed guards (the object had changed since it was read). */
class CountingClient extends KubeClient {
  patches = 0;
  guardFailures = 0;
  maxInARow = 0;
  #inARow = 0;

  override async patch<T extends KubeObject>(type: ResourceType<T>, request: PatchRequest): Promise<T> {
    this.patches++;
    try {
      const result = await super.patch(type, request);
      this.#inARow = 0;
      return result;
    } catch (err) {
      if (isPatchTestFailed(err)) {
        this.guardFailures++;
        this.maxInARow = Math.max(this.maxInARow, ++this.#inARow);
      }
      throw err;
    }
  }
}

/** A client of its own, as a second controller (or process) would have. */
async function countingClient(): Promise<CountingClient> {
  return new CountingClient(await testKubeConfig(), { userAgent: 'basic-operator-tests' });
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  assert.fail('expected the API server to reject the write');
}

describe('write helpers against the API server', () => {
  let client: KubeClient;
  let ns: string;

  before(async () => {
    client = await testClient();
    ns = await createNamespace(client, 'writing');
  });
  after(async () => {
    // A leftover finalizer would hold the namespace in Terminating.
    const left = await client.list<V1ConfigMap>(CoreTypes.ConfigMap, { namespace: ns });
    for (const cm of left.items.filter((c) => c.metadata?.finalizers?.length)) {
      await client.patch(CoreTypes.ConfigMap, {
        namespace: ns,
        name: cm.metadata!.name!,
        patchType: 'merge',
        body: {
          metadata: { finalizers: null },
        },
      });
    }
    await deleteNamespace(client, ns);
  });

  it('keeps two writers of finalizers on one object from undoing each other (50 rounds each)', {
    timeout: 60_000,
  }, async (t) => {
    const created = await client.create(CoreTypes.ConfigMap, configMap(ns, 'finalizers'));
    const rounds = 50;
    // Two writers that write back to back starve each other: each write of one fails the other's
    // guards, and a loser only gets through once its (growing) pause falls between the winner's
    // writes. Controllers do not write like this; the budget here is for the test's tight loop.
    const options = { attempts: 20 };
    const writer = async (writerClient: CountingClient, finalizer: string) => {
      let mine: V1ConfigMap = created; // deliberately reused: usually stale, the guards must catch it
      for (let round = 0; round < rounds; round++) {
        mine = await addFinalizer(writerClient, CoreTypes.ConfigMap, mine, finalizer, options);
        assert.ok(hasFinalizer(mine, finalizer), `${finalizer} present after adding (round ${round})`);
        mine = await removeFinalizer(writerClient, CoreTypes.ConfigMap, mine, finalizer, options);
        assert.ok(!hasFinalizer(mine, finalizer), `${finalizer} gone after removing (round ${round})`);
      }
      // End on an add: both must survive the other's last writes.
      return addFinalizer(writerClient, CoreTypes.ConfigMap, mine, finalizer, options);
    };
    const started = Date.now();
    const [a, b] = ['test.basicoperator.dev/writer-a', 'test.basicoperator.dev/writer-b'];
    const [clientA, clientB] = [await countingClient(), await countingClient()];
    await Promise.all([writer(clientA, a), writer(clientB, b)]);
    let server = await client.get<V1ConfigMap>(CoreTypes.ConfigMap, ns, 'finalizers');
    assert.deepEqual([...(server.metadata?.finalizers ?? [])].sort(), [a, b]);
    await Promise.all([
      removeFinalizer(clientA, CoreTypes.ConfigMap, server, a, options),
      removeFinalizer(clientB, CoreTypes.ConfigMap, server, b, options),
    ]);
    server = await client.get<V1ConfigMap>(CoreTypes.ConfigMap, ns, 'finalizers');
    assert.deepEqual(server.metadata?.finalizers ?? [], []);
    t.diagnostic(
      `2 x ${rounds} add/remove rounds on one object in ${Date.now() - started} ms; ` +
        `guard failures a ${clientA.guardFailures} (at most ${clientA.maxInARow} in a row), ` +
        `b ${clientB.guardFailures} (at most ${clientB.maxInARow} in a row)`,
    );

    // A patch the server rejects for another reason (here: an invalid finalizer name) is not retried.
    const invalidClient = await countingClient();
    const invalid = await rejection(
      addFinalizer(invalidClient, CoreTypes.ConfigMap, server, 'not a valid finalizer!', options),
    );
    assert.ok(isInvalid(invalid) && !isPatchTestFailed(invalid), invalid.message);
    assert.equal(invalidClient.patches, 1, 'a validation error is thrown at once');
  });

  /** A writer whose cache is what the test says it is (the test stands in for the informer). */
  function statusWriter<T extends ObjectWithStatus>(
    type: ResourceType<T>,
    cache: () => T | undefined,
    options: { client?: KubeClient; strategy?: StatusStrategy; failures?: string[]; batchMs?: number } = {},
  ) {
    return new BackgroundStatusWriter<T>({
      client: options.client ?? client,
      type,
      cache: { get: cache },
      strategy: options.strategy ?? replaceWholeStatus,
      setObservedGeneration: options.strategy === undefined,
      concurrency: 1,
      batchMs: options.batchMs,
      signal: new AbortController().signal,
      onError: (key) => options.failures?.push(key),
    });
  }

  it('skips a status write that changes nothing and keeps lastTransitionTime while status holds', {
    timeout: 60_000,
  }, async () => {
    const type = BASIC_REPLICA_SET;
    let brs = await client.create<BasicReplicaSet>(type, replicaSet(ns, 'status'));
    const writer = statusWriter(type, () => brs);
    const status = (ready: 'True' | 'False', reason: string): BasicReplicaSetStatus => ({
      replicas: 0,
      activeReplicas: 0,
      readyReplicas: 0,
      availableReplicas: 0,
      conditions: setCondition(
        writer.latest(brs)?.conditions,
        { type: 'Ready', status: ready, reason, message: reason },
        new Date(),
      ),
    });
    const writeAndRead = async (next: BasicReplicaSetStatus) => {
      writer.write(brs, next);
      await writer.drain();
      brs = await client.get(type, ns, 'status');
      return brs;
    };

    const first = await writeAndRead(status('False', 'Scaling'));
    const firstTransition = findCondition(first.status?.conditions, 'Ready')!.lastTransitionTime;
    assert.equal(first.status?.observedGeneration, first.metadata.generation);

    const same = await writeAndRead(status('False', 'Scaling'));
    assert.equal(
      same.metadata.resourceVersion,
      first.metadata.resourceVersion,
      'no write, no new resourceVersion',
    );

    await sleep(1_100); // condition times have whole-second resolution
    const reasonOnly = await writeAndRead(status('False', 'StillScaling'));
    const held = findCondition(reasonOnly.status?.conditions, 'Ready')!;
    assert.equal(held.reason, 'StillScaling');
    assert.equal(held.lastTransitionTime, firstTransition, 'same status: the transition time stays');

    const flipped = await writeAndRead(status('True', 'AllReady'));
    const ready = findCondition(flipped.status?.conditions, 'Ready')!;
    assert.equal(ready.status, 'True');
    assert.notEqual(ready.lastTransitionTime, firstTransition, 'a new status moves the transition time');
  });

  it('writes statuses in the background: the latest wins, no-ops and replaced objects are skipped', {
    timeout: 60_000,
  }, async () => {
    const type = BASIC_REPLICA_SET;
    const counting = await countingClient();
    const original = await client.create(type, replicaSet(ns, 'background'));
    let cached: BasicReplicaSet | undefined = original;
    const failures: string[] = [];
    const writer = statusWriter(type, () => cached, { client: counting, failures, batchMs: 0 });
    const status = (replicas: number): BasicReplicaSetStatus => ({ replicas, activeReplicas: replicas });

    writer.write(original, status(1)); // goes at once (no batch period)
    writer.write(original, status(2)); // waits behind it...
    writer.write(original, status(3)); // ...and is replaced by this one
    await writer.drain();
    assert.equal(counting.patches, 2, 'the first write and the latest');
    const read = await client.get<BasicReplicaSet>(type, ns, 'background');
    assert.equal(read.status?.replicas, 3);
    assert.equal(read.status?.observedGeneration, original.metadata.generation);

    // The cache has not seen the write yet: sending the same status again would be a no-op write.
    writer.write(original, status(3));
    await writer.drain();
    assert.equal(counting.patches, 2);
    // Once it has, the cache is compared with.
    cached = read;
    writer.write(read, status(3));
    await writer.drain();
    assert.equal(counting.patches, 2);

    // Going back to the status the (lagging) cache still shows is a real change: the server has 4.
    writer.write(read, status(4));
    await writer.drain();
    writer.write(read, status(3));
    await writer.drain();
    assert.equal(counting.patches, 4);
    const back = await client.get<BasicReplicaSet>(type, ns, 'background');
    assert.equal(back.status?.replicas, 3);

    // A status computed for an object that has since been replaced never lands on its successor.
    await client.delete(type, ns, 'background');
    const successor = await client.create(type, replicaSet(ns, 'background'));
    cached = successor;
    writer.write(read, status(7));
    await writer.drain();
    assert.equal(counting.patches, 4);
    assert.equal((await client.get<BasicReplicaSet>(type, ns, 'background')).status?.replicas, undefined);
    assert.deepEqual(failures, []);
  });

  it('with the default batch period, statuses handed over within it are one write of the latest', {
    timeout: 60_000,
  }, async () => {
    const type = BASIC_REPLICA_SET;
    const counting = await countingClient();
    const original = await client.create(type, replicaSet(ns, 'batched'));
    const writer = statusWriter(type, () => original, { client: counting });
    for (const replicas of [1, 2, 3]) writer.write(original, { replicas, activeReplicas: replicas });
    await sleep(DEFAULT_STATUS_BATCH_MS / 2);
    assert.equal(counting.patches, 0, 'nothing sent before the period is up');
    await waitFor('the write once the period is up', () => counting.patches > 0, {
      timeoutMs: 5_000,
      intervalMs: 5,
    });
    await writer.drain();
    assert.equal(counting.patches, 1);
    assert.equal((await client.get<BasicReplicaSet>(type, ns, 'batched')).status?.replicas, 3);
  });

  it('two controllers applying their own conditions to one status never overwrite each other', {
    timeout: 60_000,
  }, async () => {
    const type = MACHINE;
    let machine = await client.create<Machine>(type, {
      apiVersion: MACHINE.apiVersion,
      kind: MACHINE.kind,
      metadata: { name: 'shared', namespace: ns },
      spec: { image: 'registry.k8s.io/pause:3.10' },
    });
    const live = () => machine;
    const owner = statusWriter(type, live, { strategy: applyOwnedFields('test-owner') });
    const other = statusWriter(type, live, { strategy: applyOwnedFields('test-other') });
    const condition = (type: string, reason: string) =>
      setCondition(undefined, { type, status: 'False', reason, message: reason }, new Date());

    owner.write(machine, { phase: 'Pending', conditions: condition('Ready', 'Starting') });
    other.write(machine, { conditions: condition('VolumeBackup', 'BackupPending') });
    await Promise.all([owner.drain(), other.drain()]);
    // Each wrote from a copy that had not seen the other's write.
    owner.write(machine, { phase: 'Running', conditions: condition('Ready', 'Running') });
    await owner.drain();
    machine = await client.get(type, ns, 'shared');
    assert.equal(machine.status?.phase, 'Running');
    assert.deepEqual(machine.status?.conditions?.map((c) => `${c.type}=${c.reason}`).sort(), [
      'Ready=Running',
      'VolumeBackup=BackupPending',
    ]);
    // latest() shows both: the other controller's entry from the object, ours as written.
    const seen = other.latest(machine);
    assert.deepEqual(seen?.conditions?.map((c) => c.type).sort(), ['Ready', 'VolumeBackup']);

    // A field its owner stops sending is removed; the other's fields stay.
    owner.write(machine, { conditions: condition('Ready', 'Running') });
    await owner.drain();
    machine = await client.get(type, ns, 'shared');
    assert.equal(machine.status?.phase, undefined);
    assert.equal(findCondition(machine.status?.conditions, 'VolumeBackup')?.reason, 'BackupPending');
  });

  it('folds 20 identical events into one Event with a series', { timeout: 60_000 }, async () => {
    const regarding = await client.create(CoreTypes.ConfigMap, configMap(ns, 'evented'));
    const recorder = new ApiEventRecorder({ client, reportingInstance: 'writing-test', log: testLogger() });
    for (let i = 0; i < 20; i++) {
      recorder.record({
        regarding,
        type: 'Normal',
        reason: 'TestRepeated',
        action: 'Testing',
        note: 'the same thing happened again',
      });
    }
    await recorder.drain();
    const events = await client.list<EventsV1Event>(CoreTypes.Event, { namespace: ns });
    const ours = events.items.filter((e) => e.reason === 'TestRepeated');
    assert.equal(ours.length, 1, 'one Event object');
    const [event] = ours;
    assert.equal(event!.regarding.uid, regarding.metadata?.uid);
    assert.equal(event!.reportingController, 'basic-operator');
    assert.ok((event!.series?.count ?? 0) >= 2, `series ${JSON.stringify(event!.series)}`);
    assert.equal(event!.series?.count, 20, 'every occurrence counted once the writes drained');
  });

  it('adopts and releases with guarded patches, and reports a failed guard as such', {
    timeout: 60_000,
  }, async (t) => {
    const owner = await client.create(CoreTypes.ConfigMap, configMap(ns, 'owner'));
    const other = await client.create(CoreTypes.ConfigMap, configMap(ns, 'other-owner'));
    const orphan = await client.create(CoreTypes.ConfigMap, configMap(ns, 'orphan'));

    const adopted = await adopt(client, CoreTypes.ConfigMap, orphan, owner, CoreTypes.ConfigMap);
    assert.ok(isControlledBy(adopted, owner));
    const released = await release(client, CoreTypes.ConfigMap, adopted, owner);
    assert.ok(released && !isControlledBy(released, owner));
    assert.deepEqual(released.metadata?.ownerReferences ?? [], []);

    // A stale copy: another writer changed the ownerReferences after we read it.
    const stale = await client.get<V1ConfigMap>(CoreTypes.ConfigMap, ns, 'orphan');
    const reference = { ...controllerReference(other, CoreTypes.ConfigMap), controller: false };
    await client.patch(CoreTypes.ConfigMap, {
      namespace: ns,
      name: 'orphan',
      patchType: 'merge',
      body: {
        metadata: { ownerReferences: [reference] },
      },
    });
    const failed = await rejection(adopt(client, CoreTypes.ConfigMap, stale, owner, CoreTypes.ConfigMap));
    t.diagnostic(
      `failed JSON Patch test: ${failed.statusCode} ${failed.reason}: "${failed.message}" details ${JSON.stringify(failed.details)}`,
    );
    assert.equal(failed.statusCode, 422);
    assert.equal(failed.reason, 'Invalid');
    assert.ok(isPatchTestFailed(failed), 'recognised as a failed test operation');
    const unchanged = await client.get<V1ConfigMap>(CoreTypes.ConfigMap, ns, 'orphan');
    assert.deepEqual(
      unchanged.metadata?.ownerReferences?.map((r) => r.uid),
      [other.metadata?.uid],
      'nothing was written',
    );

    // With the list present: the whole-list test fails when the list changed meanwhile.
    const staleWithList = unchanged;
    await client.patch(CoreTypes.ConfigMap, {
      namespace: ns,
      name: 'orphan',
      patchType: 'merge',
      body: { metadata: { ownerReferences: null } },
    });
    const failedList = await rejection(
      adopt(client, CoreTypes.ConfigMap, staleWithList, owner, CoreTypes.ConfigMap),
    );
    assert.ok(isPatchTestFailed(failedList));

    // A 422 for another reason (the patched object fails validation) is not a failed test.
    const invalid = await rejection(
      client.patch(CoreTypes.ConfigMap, {
        namespace: ns,
        name: 'orphan',
        patchType: 'json',
        body: [{ op: 'add', path: '/metadata/labels/bad', value: 'not a valid label value!' }],
      }),
    );
    assert.ok(isInvalid(invalid));
    assert.equal(isPatchTestFailed(invalid), false, `validation error: ${invalid.message}`);
  });
});
