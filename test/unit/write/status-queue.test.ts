import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type StatusWriteLane, StatusWriteQueue } from '../../../src/runtime/write/status-queue.ts';

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Writes that complete only when the test releases them, recorded as "key:label". */
function controlledWrites() {
  const started: string[] = [];
  const pending = new Map<string, { resolve: () => void; reject: (err: Error) => void }>();
  const live = new AbortController();
  const write = (key: string, label: string, lane: StatusWriteLane = 'progress', signal = live.signal) => ({
    lane,
    signal,
    run: () =>
      new Promise<void>((resolve, reject) => {
        started.push(`${key}:${label}`);
        pending.set(`${key}:${label}`, { resolve, reject });
      }),
  });
  const release = async (id: string, err?: Error) => {
    const p = pending.get(id);
    assert.ok(p, `${id} is not in flight`);
    pending.delete(id);
    if (err) p.reject(err);
    else p.resolve();
    await settle();
  };
  return { started, write, release, inFlight: () => [...pending.keys()] };
}

describe('StatusWriteQueue', () => {
  it('runs at most `concurrency` writes at once, in submission order', async () => {
    const w = controlledWrites();
    const queue = new StatusWriteQueue({ concurrency: 2, onError: () => {} });
    for (const key of ['a', 'b', 'c', 'd']) queue.submit(key, w.write(key, '1'));
    assert.deepEqual(w.started, ['a:1', 'b:1']);
    assert.equal(queue.pending, 2);
    await w.release('a:1');
    assert.deepEqual(w.started, ['a:1', 'b:1', 'c:1']);
    await w.release('b:1');
    await w.release('c:1');
    await w.release('d:1');
    await queue.drain();
    assert.deepEqual(w.started, ['a:1', 'b:1', 'c:1', 'd:1']);
  });

  it('keeps only the latest waiting write of a key', async () => {
    const w = controlledWrites();
    const queue = new StatusWriteQueue({ concurrency: 1, onError: () => {} });
    queue.submit('a', w.write('a', '1'));
    queue.submit('b', w.write('b', '1'));
    queue.submit('b', w.write('b', '2'));
    queue.submit('b', w.write('b', '3'));
    assert.equal(queue.pending, 1);
    await w.release('a:1');
    await w.release('b:3');
    await queue.drain();
    assert.deepEqual(w.started, ['a:1', 'b:3']);
  });

  it('never runs two writes of one key at once, and runs the newer one after', async () => {
    const w = controlledWrites();
    const queue = new StatusWriteQueue({ concurrency: 4, onError: () => {} });
    queue.submit('a', w.write('a', '1'));
    queue.submit('a', w.write('a', '2'));
    queue.submit('b', w.write('b', '1'));
    assert.deepEqual(w.inFlight(), ['a:1', 'b:1']);
    await w.release('a:1');
    assert.deepEqual(w.inFlight(), ['b:1', 'a:2']);
    await w.release('a:2');
    await w.release('b:1');
    await queue.drain();
  });

  it('serves urgent writes before progress-only ones, and an upgraded key keeps its urgency', async () => {
    const w = controlledWrites();
    const queue = new StatusWriteQueue({ concurrency: 1, onError: () => {} });
    queue.submit('busy', w.write('busy', '1'));
    queue.submit('p1', w.write('p1', '1', 'progress'));
    queue.submit('p2', w.write('p2', '1', 'progress'));
    queue.submit('u', w.write('u', '1', 'urgent'));
    queue.submit('p2', w.write('p2', '2', 'urgent'));
    queue.submit('p2', w.write('p2', '3', 'progress'));
    await w.release('busy:1');
    await w.release('u:1');
    await w.release('p2:3');
    await w.release('p1:1');
    await queue.drain();
    assert.deepEqual(w.started, ['busy:1', 'u:1', 'p2:3', 'p1:1']);
  });

  it('reports a failed write and goes on with the others', async () => {
    const w = controlledWrites();
    const failed: string[] = [];
    const queue = new StatusWriteQueue({ concurrency: 1, onError: (key) => failed.push(key) });
    queue.submit('a', w.write('a', '1'));
    queue.submit('b', w.write('b', '1'));
    await w.release('a:1', new Error('boom'));
    assert.deepEqual(failed, ['a']);
    assert.deepEqual(w.inFlight(), ['b:1']);
    await w.release('b:1');
    await queue.drain();
  });

  it('drops writes whose owner stopped, and forgotten keys', async () => {
    const w = controlledWrites();
    const failed: string[] = [];
    const stopped = new AbortController();
    const queue = new StatusWriteQueue({ concurrency: 1, onError: (key) => failed.push(key) });
    queue.submit('a', w.write('a', '1'));
    queue.submit('b', w.write('b', '1', 'progress', stopped.signal));
    queue.submit('c', w.write('c', '1'));
    queue.submit('d', w.write('d', '1'));
    queue.forget('c');
    stopped.abort();
    await w.release('a:1');
    assert.deepEqual(w.inFlight(), ['d:1']);
    await w.release('d:1');
    await queue.drain();
    assert.deepEqual(w.started, ['a:1', 'd:1']);
    assert.deepEqual(failed, []);
  });

  it('settled(key) resolves once that key is written, failed or dropped, whatever the others do', async () => {
    const w = controlledWrites();
    const queue = new StatusWriteQueue({ concurrency: 1, onError: () => {} });
    await queue.settled('a'); // nothing for it: at once
    const done: string[] = [];
    const watch = (key: string) =>
      void queue.settled(key).then(() => {
        done.push(key);
      });
    queue.submit('a', w.write('a', '1'));
    queue.submit('a', w.write('a', '2'));
    queue.submit('b', w.write('b', '1'));
    queue.submit('c', w.write('c', '1'));
    watch('a');
    watch('c');
    queue.forget('c');
    await settle();
    assert.deepEqual(done, ['c'], 'a forgotten key is settled');
    await w.release('a:1');
    assert.deepEqual(done, ['c'], 'a newer write of a waits');
    await w.release('b:1', new Error('refused'));
    await w.release('a:2');
    assert.deepEqual(done, ['c', 'a'], 'a is settled once its newer write is sent too');
    assert.deepEqual(w.started, ['a:1', 'b:1', 'a:2']);
  });

  it('drain resolves only when nothing waits or runs', async () => {
    const w = controlledWrites();
    const queue = new StatusWriteQueue({ concurrency: 1, onError: () => {} });
    await queue.drain();
    queue.submit('a', w.write('a', '1'));
    queue.submit('b', w.write('b', '1'));
    let drained = false;
    void queue.drain().then(() => {
      drained = true;
    });
    await w.release('a:1');
    assert.equal(drained, false);
    await w.release('b:1');
    await settle();
    assert.equal(drained, true);
  });

  it('rejects a concurrency that is not a whole number >= 1', () => {
    assert.throws(() => new StatusWriteQueue({ concurrency: 0, onError: () => {} }), /whole number >= 1/);
  });
});
