// What a reconcile gets as ctx.object: the cached object of its request, with the status its
// controller last handed over merged in (the cache lags the controller's own status writes).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { waitFor } from '../../../e2e/support/wait.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { Controller } from '../../../src/runtime/controller/controller.ts';
import type { ReconcileContext, Request } from '../../../src/runtime/controller/reconciler.ts';
import { testLogger } from '../../support/log.ts';
import { RecordingStatusWriter } from '../../support/reconcile-context.ts';

type Thing = KubeObject & { spec?: { size: number }; status?: { phase?: string; note?: string } };

const cached: Thing = Object.freeze({
  metadata: { name: 'a', namespace: 'ns', uid: 'u1' },
  spec: { size: 1 },
  status: { phase: 'Cached', note: 'theirs' },
});

/** Runs one reconcile of ns/<name> on a controller over `objects`; returns its ctx.object. */
async function objectSeen(
  name: string,
  options: { status?: RecordingStatusWriter<Thing>; objects?: Thing[] } = {},
): Promise<{ object: Thing | undefined }> {
  const seen: { object: Thing | undefined }[] = [];
  const objects = new Map((options.objects ?? [cached]).map((o) => [o.metadata?.name, o]));
  const controller = new Controller<Thing>(
    {
      name: 'object-test',
      concurrency: 1,
      drainTimeoutMs: 100,
      objects: { get: (_namespace, n) => objects.get(n) },
    },
    {
      reconcile: async (_request: Request, ctx: ReconcileContext<Thing>) => {
        seen.push({ object: ctx.object });
        return undefined;
      },
    },
    new Registry(),
    testLogger(),
  );
  if (options.status) controller.useStatusWriter(options.status);
  controller.start();
  controller.enqueue({ namespace: 'ns', name });
  await waitFor('the reconcile', () => seen.length > 0, { timeoutMs: 5000, intervalMs: 5 });
  await controller.stop({ abortInFlight: true });
  return seen[0]!;
}

describe('ctx.object', () => {
  it('is the cached object with the status last handed over in place of the cached one', async () => {
    const status = new RecordingStatusWriter<Thing>();
    status.write(cached, { phase: 'HandedOver' });
    const { object } = await objectSeen('a', { status });
    assert.deepEqual(object, { ...cached, status: { phase: 'HandedOver' } });
    assert.ok(Object.isFrozen(object), 'read-only, as the cache is');
  });

  it('with a status shared with other writers (apply), has their fields and ours over them', async () => {
    const status = new RecordingStatusWriter<Thing>('apply');
    status.write(cached, { phase: 'HandedOver' });
    const { object } = await objectSeen('a', { status });
    assert.deepEqual(object?.status, { phase: 'HandedOver', note: 'theirs' });
  });

  it('is the cached object as it is when nothing was handed over, or the controller writes no status', async () => {
    assert.deepEqual((await objectSeen('a', { status: new RecordingStatusWriter<Thing>() })).object, cached);
    assert.equal((await objectSeen('a')).object, cached);
  });

  it('is undefined when the cache has no object of the name', async () => {
    assert.equal(
      (await objectSeen('gone', { status: new RecordingStatusWriter<Thing>() })).object,
      undefined,
    );
  });
});
