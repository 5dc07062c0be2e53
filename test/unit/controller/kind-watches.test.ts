// Watches added at run time: Controller.watch on a running controller (and before it starts), and
// KindWatches, which makes one informer and one watch per kind a controller learns about late. The
// informers are real, filled from the fake API server; the controller is the runtime's own.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { waitFor } from '../../../e2e/support/wait.ts';
import type { Informer } from '../../../src/runtime/cache/informer.ts';
import type { KubeObject, Unstructured } from '../../../src/runtime/client/object.ts';
import { resourceOf } from '../../../src/runtime/client/resource.ts';
import { Controller } from '../../../src/runtime/controller/controller.ts';
import { KindWatches, type WatchTarget } from '../../../src/runtime/controller/kind-watches.ts';
import type { Request } from '../../../src/runtime/controller/reconciler.ts';
import type { MapFunc } from '../../../src/runtime/controller/watch.ts';
import { FakeCluster } from '../../support/fake/cluster.ts';
import { testLogger } from '../../support/log.ts';

const WIDGET = resourceOf<Unstructured>()({
  group: 'example.dev',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});
const GADGET = resourceOf<Unstructured>()({
  group: 'example.dev',
  version: 'v1',
  kind: 'Gadget',
  plural: 'gadgets',
  namespaced: true,
});

const widget = (name: string, owner: string, spec: Record<string, unknown> = {}): Unstructured => ({
  apiVersion: 'example.dev/v1',
  kind: 'Widget',
  metadata: { name, namespace: 'ns', labels: { owner } },
  spec,
});

/** A widget's event concerns the object its `owner` label names. */
const byOwnerLabel: MapFunc<KubeObject> = (obj) => [
  { namespace: obj.metadata?.namespace ?? '', name: obj.metadata?.labels?.owner ?? '' },
];

const controllers: Controller[] = [];
after(async () => {
  for (const c of controllers) await c.stop({ abortInFlight: true });
});

/** A controller that records what it reconciles. */
function recordingController(): { controller: Controller; reconciled: string[] } {
  const reconciled: string[] = [];
  const controller = new Controller(
    { name: `test-${controllers.length}`, concurrency: 1, drainTimeoutMs: 100 },
    {
      reconcile: async (request: Request) => {
        reconciled.push(`${request.namespace}/${request.name}`);
        return undefined;
      },
    },
    new Registry(),
    testLogger(),
  );
  controllers.push(controller);
  return { controller, reconciled };
}

describe('Controller.watch', () => {
  it('on a running controller: what the informer holds, then its events, enqueue what the map returns', async () => {
    const cluster = new FakeCluster();
    cluster.seed(WIDGET, widget('w1', 'a'));
    const { controller, reconciled } = recordingController();
    controller.start();
    const informer = await cluster.informer(WIDGET);
    controller.watch(informer, byOwnerLabel);
    await waitFor('the cached widget', () => reconciled.includes('ns/a'), { timeoutMs: 5000, intervalMs: 5 });

    cluster.seed(WIDGET, widget('w2', 'b'));
    await cluster.sync();
    await waitFor('the new widget', () => reconciled.includes('ns/b'), { timeoutMs: 5000, intervalMs: 5 });
  });

  it('before start: nothing is enqueued until the controller runs, then what is cached is', async () => {
    const cluster = new FakeCluster();
    cluster.seed(WIDGET, widget('w1', 'a'));
    const { controller, reconciled } = recordingController();
    const informer = await cluster.informer(WIDGET);
    controller.watch(informer, byOwnerLabel, { create: (obj) => obj.metadata?.name !== 'skipped' });
    assert.equal(controller.queue.len(), 0);
    controller.start();
    await waitFor('the cached widget', () => reconciled.includes('ns/a'), { timeoutMs: 5000, intervalMs: 5 });
  });
});

/** Records the requests each watch's events map to, without a controller. */
class RecordingTarget implements WatchTarget {
  readonly requests: string[] = [];
  readonly informers: Informer<KubeObject>[] = [];

  watch<U extends KubeObject>(informer: Informer<U>, map: MapFunc<U>): void {
    this.informers.push(informer as unknown as Informer<KubeObject>);
    const record = (obj: U) => {
      for (const r of map(obj)) this.requests.push(`${r.namespace}/${r.name}`);
    };
    informer.addHandler({ onAdd: record, onUpdate: (_old, obj) => record(obj), onDelete: record });
  }
}

describe('KindWatches', () => {
  it('one informer and one watch per kind, from the first informerFor; kinds tracked before bind() are watched then', async () => {
    const cluster = new FakeCluster();
    cluster.seed(WIDGET, widget('w1', 'a'));
    const watches = new KindWatches<Unstructured>(cluster, byOwnerLabel);
    const widgets = watches.informerFor(WIDGET);
    assert.equal(watches.informerFor({ ...WIDGET }), widgets, 'the same kind: the same informer');
    const target = new RecordingTarget();
    watches.bind(target);
    assert.equal(target.informers.length, 1);
    watches.informerFor(GADGET);
    watches.informerFor(GADGET);
    assert.equal(target.informers.length, 2, 'one watch per kind');

    await cluster.sync();
    assert.equal(widgets.hasSynced, true);
    assert.deepEqual(widgets.get('ns', 'w1')?.spec, {}, 'objects are kept whole, unstructured');
    assert.deepEqual(target.requests, ['ns/a']);
    cluster.client.clearActions();
    cluster.server.patch(WIDGET, {
      namespace: 'ns',
      name: 'w1',
      patchType: 'merge',
      body: { spec: { size: 2 } },
    });
    await cluster.sync();
    assert.deepEqual(target.requests, ['ns/a', 'ns/a']);
    assert.throws(() => watches.bind(target), /bound/);
  });
});
