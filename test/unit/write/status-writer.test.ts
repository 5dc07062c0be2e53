import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import type { KubeClient, PatchRequest } from '../../../src/runtime/client/kube-client.ts';
import { resourceOf } from '../../../src/runtime/client/resource.ts';
import type { Condition } from '../../../src/runtime/write/conditions.ts';
import {
  applyOwnedFields,
  replaceWholeStatus,
  type StatusStrategy,
} from '../../../src/runtime/write/status-strategy.ts';
import { BackgroundStatusWriter, type ProgressOptions } from '../../../src/runtime/write/status-writer.ts';

interface ThingStatus {
  phase?: string;
  ready?: number;
  observedGeneration?: number;
  conditions?: Condition[];
}
interface Thing {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
  };
  status?: ThingStatus;
}
const THING = resourceOf<Thing>()({
  group: 'test',
  version: 'v1',
  kind: 'Thing',
  plural: 'things',
  namespaced: true,
});

const thing = (uid: string, status?: ThingStatus): Thing => ({
  metadata: { name: 'a', namespace: 'ns', uid, generation: 1, resourceVersion: '1' },
  ...(status ? { status } : {}),
});
const condition = (type: string, reason: string): Condition => ({
  type,
  status: 'True',
  reason,
  message: reason,
  lastTransitionTime: '2026-11-24T00:00:00Z',
});

/** A client that records the status patches it gets and answers with a resourceVersion. */
function recordingClient(fail?: (request: PatchRequest) => Error | undefined) {
  const sent: PatchRequest[] = [];
  const client = {
    patch: async (_type: unknown, request: PatchRequest) => {
      sent.push(request);
      const err = fail?.(request);
      if (err) throw err;
      return { metadata: { resourceVersion: String(sent.length + 100) } };
    },
  } as unknown as KubeClient;
  return { client, sent };
}

function writerFor(options: {
  client: KubeClient;
  cached: (namespace: string | undefined, name: string) => Thing | undefined;
  strategy?: StatusStrategy;
  progress?: ProgressOptions<ThingStatus>;
  concurrency?: number;
  batchMs?: number;
  signal?: AbortSignal;
  errors?: string[];
}) {
  return new BackgroundStatusWriter<Thing>({
    client: options.client,
    type: THING,
    cache: { get: options.cached },
    strategy: options.strategy ?? replaceWholeStatus,
    setObservedGeneration: options.strategy === undefined,
    soleWriter: options.strategy === undefined || options.strategy === replaceWholeStatus,
    progress: options.progress,
    concurrency: options.concurrency,
    batchMs: options.batchMs ?? 0,
    signal: options.signal ?? new AbortController().signal,
    onError: (key) => options.errors?.push(key),
  });
}

const statusSent = (request: PatchRequest | undefined): unknown =>
  (request?.body as { value?: unknown }[] | undefined)?.[1]?.value;

describe('BackgroundStatusWriter', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'] }));
  afterEach(() => mock.timers.reset());

  it('latest() is the status last handed over, before the write lands and the cache shows it', () => {
    const { client } = recordingClient();
    const cached = thing('u1', { phase: 'Old' });
    const w = writerFor({ client, cached: () => cached });
    assert.equal(w.latest(cached)?.phase, 'Old');
    w.write(cached, { phase: 'First' });
    w.write(cached, { phase: 'Second' });
    assert.equal(w.latest(cached)?.phase, 'Second');
    assert.equal(w.latest(thing('u2', { phase: 'Recreated' }))?.phase, 'Recreated', 'a namesake has its own');
    w.forget('ns/a');
    assert.equal(w.latest(cached)?.phase, 'Old');
  });

  it('sends the latest status, with the generation it was computed from, guarded by the uid', async () => {
    const { client, sent } = recordingClient();
    const cached = thing('u1', { phase: 'Old' });
    const w = writerFor({ client, cached: () => cached });
    w.write(cached, { phase: 'First' });
    w.write(cached, { phase: 'Second' });
    w.write(cached, { phase: 'Third' });
    await w.drain();
    // The first goes at once; the two behind it coalesce into the latest.
    assert.deepEqual(sent.map(statusSent), [
      { phase: 'First', observedGeneration: 1 },
      { phase: 'Third', observedGeneration: 1 },
    ]);
    assert.deepEqual((sent[0]!.body as unknown[])[0], { op: 'test', path: '/metadata/uid', value: 'u1' });
    assert.equal(sent[0]?.subresource, 'status');
  });

  it('sends nothing the server has already, nor for an object that is gone or replaced', async () => {
    const { client, sent } = recordingClient();
    let cached: Thing | undefined = thing('u1', { phase: 'Same', observedGeneration: 1 });
    const w = writerFor({ client, cached: () => cached });
    w.write(thing('u1'), { phase: 'Same' });
    await w.drain();
    cached = thing('u2');
    w.write(thing('u1'), { phase: 'New' });
    await w.drain();
    cached = undefined;
    w.write(thing('u1'), { phase: 'Newer' });
    await w.drain();
    assert.equal(sent.length, 0);
  });

  it('keeps no copy of a status once the cache shows it written: a later change by another hand is the latest', async () => {
    const { client, sent } = recordingClient();
    const old = thing('u1', { phase: 'Old' });
    let cached: Thing = old;
    const w = writerFor({ client, cached: () => cached });
    w.write(cached, { phase: 'Ours' });
    await w.drain();
    // The cache shows our write (resourceVersion 101, what the client answered), with no reconcile.
    cached = {
      ...thing('u1', { phase: 'Ours', observedGeneration: 1 }),
      metadata: { ...old.metadata, resourceVersion: '101' },
    };
    w.observed(cached);
    assert.equal(w.latest(old)?.phase, 'Ours', 'a reconcile holding an older copy gets what the cache has');
    cached = {
      ...cached,
      metadata: { ...cached.metadata, resourceVersion: '102' },
      status: { phase: 'Theirs' },
    };
    assert.equal(w.latest(cached)?.phase, 'Theirs');
    // Nor of the write: the same status again is compared with the cache, which now has another.
    w.write(cached, { phase: 'Ours' });
    await w.drain();
    assert.equal(sent.length, 2);
  });

  it("changedByOthers: a sole writer tells someone else's edit of its status from its own writes", async () => {
    let release = () => {};
    const client = {
      patch: async () => {
        await new Promise<void>((resolve) => (release = resolve));
        return { metadata: { resourceVersion: '101' } };
      },
    } as unknown as KubeClient;
    const old = thing('u1', { phase: 'Old', observedGeneration: 1 });
    let cached: Thing = old;
    const w = writerFor({ client, cached: () => cached });
    const at = (resourceVersion: string, status: ThingStatus): Thing => ({
      ...old,
      metadata: { ...old.metadata, resourceVersion },
      status,
    });
    w.write(old, { phase: 'Ours' });
    await Promise.resolve();
    // Our write's event comes before its answer: still ours.
    const ours = at('101', { phase: 'Ours', observedGeneration: 1 });
    assert.equal(w.changedByOthers(old, ours), false, 'a write in flight');
    release();
    await w.drain();
    assert.equal(w.changedByOthers(old, ours), false, 'answered with that resourceVersion');
    cached = ours;
    w.observed(ours);
    assert.equal(
      w.changedByOthers(ours, at('102', { phase: 'Ours', observedGeneration: 1 })),
      false,
      'status unchanged',
    );
    const edited = at('103', { phase: 'Hand-made', observedGeneration: 1 });
    assert.equal(w.changedByOthers(ours, edited), true, 'someone patched the status');

    const shared = new BackgroundStatusWriter<Thing>({
      client,
      type: THING,
      cache: { get: () => cached },
      strategy: applyOwnedFields('me'),
      setObservedGeneration: false,
      signal: new AbortController().signal,
      onError: () => {},
    });
    assert.equal(shared.changedByOthers(ours, edited), false, "a shared status is others' to write too");
  });

  it('a write waiting its turn is sent even when the cache shows that status: the server may have a newer one of ours', async () => {
    let release = () => {};
    const sent: string[] = [];
    const client = {
      patch: async (_type: unknown, request: PatchRequest) => {
        sent.push(`${request.name} ${(statusSent(request) as ThingStatus).phase}`);
        if (request.name === 'b') await new Promise<void>((resolve) => (release = resolve));
        return { metadata: { resourceVersion: String(sent.length + 100) } };
      },
    } as unknown as KubeClient;
    const a = thing('u1', { phase: 'One', observedGeneration: 1 }); // the cache lags: it shows One
    const b = { ...thing('u2'), metadata: { ...thing('u2').metadata, name: 'b' } };
    const w = writerFor({ client, cached: (_ns, name) => (name === 'b' ? b : a), concurrency: 1 });
    w.write(a, { phase: 'Two' });
    await w.drain(); // the server has Two
    w.write(b, { phase: 'X' }); // in flight, holding the only slot
    w.write(a, { phase: 'One' }); // back to One: waits for the slot
    assert.equal(w.latest(a)?.phase, 'One');
    w.observed(a);
    release();
    await w.drain();
    assert.deepEqual(sent, ['a Two', 'b X', 'a One']);
  });

  it('holds progress-only changes for the interval and then sends the latest; an urgent one goes at once', async () => {
    const { client, sent } = recordingClient();
    const cached = thing('u1', { ready: 0, observedGeneration: 1 });
    const w = writerFor({ client, cached: () => cached, progress: { counts: ['ready'], intervalMs: 1000 } });
    w.write(cached, { ready: 1 }); // nothing sent for a while: goes at once
    await w.drain();
    w.write(cached, { ready: 2 });
    w.write(cached, { ready: 3 });
    await Promise.resolve();
    assert.equal(sent.length, 1, 'held');
    assert.equal(w.pending, 1);
    mock.timers.tick(1000);
    await w.drain();
    assert.deepEqual(
      sent.map((r) => (statusSent(r) as ThingStatus).ready),
      [1, 3],
    );

    w.write(cached, { ready: 4 }); // held again...
    w.write(cached, { ready: 2 }); // ...and a count that goes down is urgent
    await w.drain();
    assert.deepEqual(
      sent.map((r) => (statusSent(r) as ThingStatus).ready),
      [1, 3, 2],
    );
  });

  /** A writer whose work is done at ready 3, holding progress for a minute. */
  function writerDoneAtThree(batchMs?: number) {
    const { client, sent } = recordingClient();
    const cached = thing('u1', { ready: 0, observedGeneration: 1 });
    const w = writerFor({
      client,
      cached: () => cached,
      progress: { counts: ['ready'], intervalMs: 60_000, done: (s) => s.ready === 3 },
      batchMs,
    });
    return { w, cached, sent };
  }

  it('a progress change that completes the work (done) goes at once: readers wait for it', async () => {
    const { w, cached, sent } = writerDoneAtThree();
    w.write(cached, { ready: 1 });
    await w.drain();
    w.write(cached, { ready: 2 });
    await Promise.resolve();
    assert.equal(sent.length, 1, 'held');
    w.write(cached, { ready: 3 });
    await Promise.resolve();
    await Promise.resolve();
    assert.deepEqual(
      sent.map((r) => (statusSent(r) as ThingStatus).ready),
      [1, 3],
      'the last count is sent without waiting for the interval',
    );
    assert.equal(w.pending, 0, 'nothing left held');
  });

  /** A writer holding progress-only writes for a minute, its first count (1) already written. */
  async function writerHoldingProgress() {
    const { client, sent } = recordingClient();
    const cached = thing('u1', { ready: 0, observedGeneration: 1 });
    const w = writerFor({
      client,
      cached: () => cached,
      progress: { counts: ['ready'], intervalMs: 60_000 },
    });
    w.write(cached, { ready: 1 });
    await w.drain();
    return { w, cached, readiesSent: () => sent.map((r) => (statusSent(r) as ThingStatus).ready) };
  }

  it('flush() sends a held write at once and resolves once it is written', async () => {
    const { w, cached, readiesSent } = await writerHoldingProgress();
    await w.flush(cached); // nothing waiting: resolves at once
    w.write(cached, { ready: 2 });
    await Promise.resolve();
    assert.deepEqual(readiesSent(), [1], 'held for its interval');
    await w.flush(cached);
    assert.deepEqual(
      readiesSent(),
      [1, 2],
      'written when flush() resolves, without waiting for the interval',
    );
    assert.equal(w.pending, 0);
  });

  it('drain() sends what it holds at once (shutdown)', async () => {
    const { w, cached, readiesSent } = await writerHoldingProgress();
    w.write(cached, { ready: 5 });
    await w.drain();
    assert.deepEqual(readiesSent(), [1, 5]);
  });

  it('waits the batch period before sending, and sends only the latest status handed over meanwhile', async () => {
    const { client, sent } = recordingClient();
    const cached = thing('u1', { phase: 'Old' });
    const w = writerFor({ client, cached: () => cached, batchMs: 20 });
    w.write(cached, { phase: 'First' });
    mock.timers.tick(10);
    w.write(cached, { phase: 'Second' }); // does not push the write back
    assert.equal(w.latest(cached)?.phase, 'Second', 'reconciles read what waits');
    mock.timers.tick(9);
    await Promise.resolve();
    assert.equal(sent.length, 0, 'nothing before the batch period is up');
    mock.timers.tick(1);
    await w.drain();
    assert.deepEqual(sent.map(statusSent), [{ phase: 'Second', observedGeneration: 1 }]);
  });

  it('with a batch period, an urgent change held behind a progress interval goes after the period; progress does not delay it', async () => {
    const { client, sent } = recordingClient();
    const cached = thing('u1', { ready: 0, observedGeneration: 1 });
    const w = writerFor({
      client,
      cached: () => cached,
      progress: { counts: ['ready'], intervalMs: 1000 },
      batchMs: 20,
    });
    const readiesSent = () => sent.map((r) => (statusSent(r) as ThingStatus).ready);
    w.write(cached, { ready: 1 });
    mock.timers.tick(20);
    await w.drain();
    assert.deepEqual(readiesSent(), [1], 'the first progress write waits only the batch period');
    w.write(cached, { ready: 2 }); // held for the interval
    mock.timers.tick(100);
    w.write(cached, { ready: 1 }); // a count going down is urgent: the period, not the interval
    mock.timers.tick(10);
    w.write(cached, { ready: 2 }); // progress again: stays urgent and keeps its time
    mock.timers.tick(9);
    await Promise.resolve();
    assert.deepEqual(readiesSent(), [1]);
    mock.timers.tick(1);
    await w.drain();
    assert.deepEqual(readiesSent(), [1, 2]);
    assert.equal(w.pending, 0);
  });

  it('a status that completes the work (done) goes at once with a batch period, replacing the one waiting', async () => {
    const { w, cached, sent } = writerDoneAtThree(250);
    w.write(cached, { ready: 0, phase: 'Scaling' }); // urgent: waits the batch period
    mock.timers.tick(100);
    await Promise.resolve();
    assert.equal(sent.length, 0, 'waiting for the batch period');
    w.write(cached, { ready: 3, phase: 'Scaling' });
    await Promise.resolve();
    await Promise.resolve();
    assert.deepEqual(
      sent.map((r) => (statusSent(r) as ThingStatus).ready),
      [3],
      'one write, of the done status, before the period is up',
    );
    assert.equal(w.pending, 0, 'nothing left held');
    mock.timers.tick(250);
    await w.drain();
    assert.equal(sent.length, 1, 'the waiting write does not go as well');
  });

  it('drain() and flush() send a write waiting for the batch period at once', async () => {
    const { client, sent } = recordingClient();
    const cached = thing('u1', { phase: 'Old' });
    const w = writerFor({ client, cached: () => cached, batchMs: 60_000 });
    w.write(cached, { phase: 'Flushed' });
    await w.flush(cached);
    w.write(cached, { phase: 'Drained' });
    await w.drain();
    assert.deepEqual(
      sent.map((r) => (statusSent(r) as ThingStatus).phase),
      ['Flushed', 'Drained'],
    );
  });

  it('a controller that stops drops the writes waiting for the batch period', async () => {
    const { client, sent } = recordingClient();
    const cached = thing('u1', { phase: 'Old' });
    const stop = new AbortController();
    const w = writerFor({ client, cached: () => cached, batchMs: 20, signal: stop.signal });
    w.write(cached, { phase: 'Late' });
    assert.equal(w.pending, 1);
    stop.abort();
    assert.equal(w.pending, 0, 'nothing held once stopped');
    mock.timers.tick(20);
    await w.drain();
    assert.equal(sent.length, 0);
  });

  it('a write that fails asks for a reconcile; one whose object is gone does not', async () => {
    const errors: string[] = [];
    const { client } = recordingClient((r) =>
      r.name === 'a' ? new ApiError(500, 'InternalError', 'etcd is down') : undefined,
    );
    const cached = thing('u1');
    const w = writerFor({ client, cached: () => cached, errors });
    w.write(cached, { phase: 'X' });
    await w.drain();
    assert.deepEqual(errors, ['ns/a']);

    const gone = recordingClient(() => new ApiError(404, 'NotFound', 'gone'));
    const w2 = writerFor({ client: gone.client, cached: () => cached, errors });
    w2.write(cached, { phase: 'X' });
    await w2.drain();
    assert.deepEqual(errors, ['ns/a']);
  });
});

describe('applyOwnedFields', () => {
  const strategy = applyOwnedFields('me');

  it('sends only the fields handed over, as a forced apply of the status with its field manager', async () => {
    const { client, sent } = recordingClient();
    const cached = thing('u1', { phase: 'P', conditions: [condition('Theirs', 'A')] });
    const w = writerFor({ client, cached: () => cached, strategy });
    w.write(cached, { conditions: [condition('Mine', 'B')] });
    await w.drain();
    assert.equal(sent.length, 1);
    assert.equal(sent[0]?.patchType, 'apply');
    assert.equal(sent[0]?.fieldManager, 'me');
    assert.equal(sent[0]?.force, true);
    assert.deepEqual((sent[0]!.body as { status: unknown }).status, { conditions: [condition('Mine', 'B')] });
  });

  it('has() looks only at the fields sent, and at conditions by type', () => {
    const current = { phase: 'P', conditions: [condition('Theirs', 'A'), condition('Mine', 'B')] };
    assert.equal(strategy.has(current, { conditions: [condition('Mine', 'B')] }), true);
    assert.equal(strategy.has(current, { conditions: [condition('Mine', 'C')] }), false);
    assert.equal(strategy.has(current, { phase: 'P' }), true);
    assert.equal(strategy.has(current, { phase: 'Q' }), false);
    assert.equal(strategy.has(undefined, { conditions: [condition('Mine', 'B')] }), false);
  });

  it("overlay() keeps the other writers' conditions and replaces ours", () => {
    const merged = strategy.overlay(
      { phase: 'P', conditions: [condition('Theirs', 'A'), condition('Mine', 'Old')] },
      { ready: 1, conditions: [condition('Mine', 'New')] },
    ) as ThingStatus;
    assert.equal(merged.phase, 'P');
    assert.equal(merged.ready, 1);
    assert.deepEqual(
      merged.conditions?.map((c) => `${c.type}=${c.reason}`),
      ['Theirs=A', 'Mine=New'],
    );
  });
});

describe('replaceWholeStatus.has', () => {
  it('compares as JSON: key order and undefined members do not matter, list order does', () => {
    const current = { phase: 'P', ready: 1, conditions: [condition('A', 'a'), condition('B', 'b')] };
    assert.equal(
      replaceWholeStatus.has(
        { ...current, observedGeneration: undefined },
        { ready: 1, phase: 'P', conditions: current.conditions },
      ),
      true,
    );
    assert.equal(
      replaceWholeStatus.has(current, { ...current, conditions: [condition('B', 'b'), condition('A', 'a')] }),
      false,
    );
    assert.equal(replaceWholeStatus.has(undefined, {}), true);
  });
});
