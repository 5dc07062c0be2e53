import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { handoverReserveMs, ShutdownDeadline } from '../../../src/runtime/manager/shutdown-deadline.ts';
import { testLogger } from '../../support/log.ts';

const never = new Promise<void>(() => {});

describe('ShutdownDeadline', () => {
  it('gives each step what is left of one deadline', async () => {
    const deadline = new ShutdownDeadline(200, testLogger());
    const started = Date.now();
    assert.equal(await deadline.wait('first', delay(120)), true);
    assert.equal(await deadline.wait('second', never), false);
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 190 && elapsed < 400, `the two steps took ${elapsed} ms, not the 200 ms timeout`);
    assert.equal(await deadline.wait('after the deadline', never), false);
  });

  it('passes a failed step on', async () => {
    const deadline = new ShutdownDeadline(1000, testLogger());
    await assert.rejects(deadline.wait('failing', Promise.reject(new Error('boom'))), /boom/);
  });

  it('leaves a quarter of the timeout, at most 2 s, for the steps after the controllers', () => {
    assert.equal(handoverReserveMs(1000), 250);
    assert.equal(handoverReserveMs(30_000), 2000);
    assert.equal(handoverReserveMs(0), 0);
  });
});
