// finalizer(): the finalizer before apply, cleanup on deletion, and the finalizer gone only once
// cleanup says it is done (kube-rs's finalizer helper).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { resourceOf } from '../../../src/runtime/client/resource.ts';
import { type Cleanup, type FinalizerSteps, finalizer } from '../../../src/runtime/controller/finalizer.ts';
import type { Result } from '../../../src/runtime/controller/reconciler.ts';
import { FakeApiServer } from '../../support/fake/api-server.ts';
import { asKubeClient, FakeClient } from '../../support/fake/client.ts';

type Thing = KubeObject & { status?: { phase?: string } };
const THING = resourceOf<Thing>()({
  group: 'example.dev',
  version: 'v1',
  kind: 'Thing',
  plural: 'things',
  namespaced: true,
});
const FINALIZER = 'example.dev/cleanup';

/** Steps that record what ran, cleanup answering `cleanup`. */
function recording(cleanup: Cleanup = { done: true }, applied: Result | undefined = undefined) {
  const ran: string[] = [];
  const seen: Thing[] = [];
  const steps: FinalizerSteps<Thing> = {
    apply: async (obj) => {
      ran.push('apply');
      seen.push(obj);
      return applied;
    },
    cleanup: async (obj) => {
      ran.push('cleanup');
      seen.push(obj);
      return cleanup;
    },
    added: () => ran.push('added'),
    removed: () => ran.push('removed'),
  };
  return { steps, ran, seen };
}

function setup(thing: Partial<KubeObject['metadata']> = {}) {
  const server = new FakeApiServer();
  const fake = new FakeClient(server);
  const [stored] = server.seed(THING, {
    metadata: { name: 'a', namespace: 'ns', ...thing },
    status: { phase: 'Cached' },
  });
  return { server, fake, client: asKubeClient(fake), obj: stored! };
}

const writes = (fake: FakeClient) => fake.writes().map((a) => `${a.verb} ${a.name}`);

describe('finalizer', () => {
  it('adds the finalizer to a live object first, then applies with it (and the status it was given)', async () => {
    const { server, fake, client, obj } = setup();
    const { steps, ran, seen } = recording(undefined, { requeueAfterMs: 5 });
    const handedOver: Thing = { ...obj, status: { phase: 'HandedOver' } };
    assert.deepEqual(await finalizer(client, THING, handedOver, FINALIZER, steps), { requeueAfterMs: 5 });
    assert.deepEqual(ran, ['added', 'apply']);
    assert.deepEqual(writes(fake), ['patch a']);
    assert.deepEqual(server.get(THING, 'ns', 'a').metadata?.finalizers, [FINALIZER]);
    assert.deepEqual(seen[0]?.metadata?.finalizers, [FINALIZER]);
    assert.deepEqual(seen[0]?.status, { phase: 'HandedOver' }, 'a metadata patch does not change the status');
  });

  it('applies to a live object that holds it, writing nothing itself', async () => {
    const { fake, client, obj } = setup({ finalizers: [FINALIZER] });
    const { steps, ran } = recording();
    await finalizer(client, THING, obj, FINALIZER, steps);
    assert.deepEqual(ran, ['apply']);
    assert.deepEqual(writes(fake), []);
  });

  it('an object gone before the finalizer is added: nothing more', async () => {
    const { fake, client, obj } = setup();
    fake.fail({ verb: 'patch' }, new ApiError(404, 'NotFound', 'things "a" not found'));
    const { steps, ran } = recording();
    assert.equal(await finalizer(client, THING, obj, FINALIZER, steps), undefined);
    assert.deepEqual(ran, []);
  });

  it('deletion: cleanup, and the finalizer stays while cleanup is not done', async () => {
    const { server, fake, client } = setup({ finalizers: [FINALIZER] });
    server.delete(THING, 'ns', 'a');
    const { steps, ran } = recording({ done: false, result: { requeue: true } });
    assert.deepEqual(await finalizer(client, THING, server.get(THING, 'ns', 'a'), FINALIZER, steps), {
      requeue: true,
    });
    assert.deepEqual(ran, ['cleanup']);
    assert.deepEqual(writes(fake), []);
  });

  it('deletion: the finalizer goes once cleanup is done, and the object with it', async () => {
    const { server, fake, client } = setup({ finalizers: [FINALIZER] });
    server.delete(THING, 'ns', 'a');
    const { steps, ran } = recording({ done: true });
    assert.equal(await finalizer(client, THING, server.get(THING, 'ns', 'a'), FINALIZER, steps), undefined);
    assert.deepEqual(ran, ['cleanup', 'removed']);
    assert.deepEqual(writes(fake), ['patch a']);
    assert.deepEqual(server.list(THING), [], 'its last finalizer gone, the object is');
  });

  it('deletion: an object gone by the time its finalizer is removed counts as removed', async () => {
    const { server, fake, client } = setup({ finalizers: [FINALIZER] });
    server.delete(THING, 'ns', 'a');
    fake.fail({ verb: 'patch' }, new ApiError(404, 'NotFound', 'things "a" not found'));
    const { steps, ran } = recording({ done: true });
    await finalizer(client, THING, server.get(THING, 'ns', 'a'), FINALIZER, steps);
    assert.deepEqual(ran, ['cleanup', 'removed']);
  });

  it('an object being deleted without the finalizer is left alone', async () => {
    const { server, fake, client } = setup({ finalizers: ['example.dev/other'] });
    server.delete(THING, 'ns', 'a');
    const { steps, ran } = recording();
    assert.equal(await finalizer(client, THING, server.get(THING, 'ns', 'a'), FINALIZER, steps), undefined);
    assert.deepEqual(ran, []);
    assert.deepEqual(writes(fake), []);
  });
});
