import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { RequestDeadline } from '../../../src/runtime/client/request-deadline.ts';

describe('RequestDeadline', () => {
  it('aborts with a TimeoutError that names the timeout', async () => {
    const { signal } = new RequestDeadline(20);
    assert.ok(signal);
    await sleep(60);
    assert.equal(signal.aborted, true);
    assert.equal((signal.reason as DOMException).name, 'TimeoutError');
    assert.match((signal.reason as Error).message, /longer than 20 ms/);
  });

  it('follows the caller signal, before the timeout', () => {
    const caller = new AbortController();
    const deadline = new RequestDeadline(10_000, caller.signal);
    caller.abort(new Error('shutting down'));
    assert.equal(deadline.signal?.aborted, true);
    assert.match(String(deadline.signal?.reason), /shutting down/);
    deadline.clear();
  });

  it('starts aborted when the caller signal already is', () => {
    const caller = new AbortController();
    caller.abort(new Error('gone'));
    const deadline = new RequestDeadline(10_000, caller.signal);
    assert.equal(deadline.signal?.aborted, true);
    deadline.clear();
  });

  it('once cleared, neither the timer nor the caller signal aborts it', async () => {
    const caller = new AbortController();
    const deadline = new RequestDeadline(20, caller.signal);
    deadline.clear();
    await sleep(60);
    caller.abort();
    assert.equal(deadline.signal?.aborted, false);
  });

  it('without a timeout is the caller signal itself', () => {
    const caller = new AbortController();
    assert.equal(new RequestDeadline(undefined, caller.signal).signal, caller.signal);
    assert.equal(new RequestDeadline(undefined).signal, undefined);
  });
});
