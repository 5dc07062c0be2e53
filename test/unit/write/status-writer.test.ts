import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import type { StatusWriteQueue } from '../../../src/runtime/write/status-queue.ts';
import { BackgroundStatusWriter } from '../../../src/runtime/write/status-writer.ts';

interface Thing {
  metadata?: { name?: string; namespace?: string; uid?: string; generation?: number };
  status?: { phase?: string; observedGeneration?: number };
}

/** A queue that holds on to writes (they never run): what latestStatus reports must not wait for them. */
const heldQueue = { submit() {}, forget() {} } as unknown as StatusWriteQueue;
const signal = new AbortController().signal;
const thing = (uid: string, phase: string): Thing => ({
  metadata: { name: 'a', namespace: 'ns', uid, generation: 1 },
  status: { phase },
});

function writer() {
  return new BackgroundStatusWriter<Thing>({
    client: {} as KubeClient,
    type: CoreTypes.ConfigMap,
    cache: { get: () => undefined },
    queue: heldQueue,
  });
}

describe('BackgroundStatusWriter.latestStatus', () => {
  it('is the status last submitted, before the write lands and the cache shows it', () => {
    const w = writer();
    const cached = thing('u1', 'Old');
    assert.equal(w.latestStatus(cached)?.phase, 'Old');
    w.submit(cached, { phase: 'First' }, 'urgent', signal);
    w.submit(cached, { phase: 'Second' }, 'progress', signal);
    assert.equal(w.latestStatus(cached)?.phase, 'Second');
  });

  it("is the object's own status for a namesake with another uid, and after forget()", () => {
    const w = writer();
    w.submit(thing('u1', 'Old'), { phase: 'Submitted' }, 'urgent', signal);
    assert.equal(w.latestStatus(thing('u2', 'Recreated'))?.phase, 'Recreated');
    w.forget('ns/a');
    assert.equal(w.latestStatus(thing('u1', 'Cached'))?.phase, 'Cached');
  });
});
