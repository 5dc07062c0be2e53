// What a reconcile gets as ctx.object: the cached object of its request, with the status its
// controller last handed over merged in (the cache lags the controller's own status writes).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { waitFor } from '../../../e2e/support/wait.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { resourceOf } from '../../../src/runtime/client/resource.ts';
import { Controller } from '../../../src/runtime/controller/controller.ts';
import type { ReconcileContext, Request } from '../../../src/runtime/controller/reconciler.ts';
import { replaceWholeStatus } from '../../../src/runtime/write/status-strategy.ts';
import { BackgroundStatusWriter, type StatusWriter } from '../../../src/runtime/write/status-writer.ts';
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
  options: { status?: StatusWriter<Thing>; objects?: Thing[] } = {},
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

  it('with the runtime writer: what was handed over and written, before the cache shows it, reconcile after reconcile', async () => {
    const THING = resourceOf<Thing>()({
      group: 'test',
      version: 'v1',
      kind: 'Thing',
      plural: 'things',
      namespaced: true,
    });
    const client = {
      patch: async () => ({ metadata: { resourceVersion: '101' } }),
    } as unknown as KubeClient;
    const status = new BackgroundStatusWriter<Thing>({
      client,
      type: THING,
      cache: { get: () => cached },
      strategy: replaceWholeStatus,
      batchMs: 0,
      signal: new AbortController().signal,
      onError: (key, err) => assert.fail(`${key}: ${err}`),
    });
    status.write(cached, { phase: 'HandedOver' });
    await status.drain();
    // The write is done and the cache still shows the old status: the writer's copy is all there is.
    for (let i = 0; i < 2; i++) {
      assert.deepEqual((await objectSeen('a', { status })).object?.status, { phase: 'HandedOver' });
    }
  });
});
