// The event handler a controller puts on an informer (dispatch): what an update enqueues. The work
// queue hands an item to an idle worker at once, so an update that adds the same request twice
// (once for the old object, once for the new) would reconcile it twice.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { waitFor } from '../../../e2e/support/wait.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { Controller } from '../../../src/runtime/controller/controller.ts';
import type { Request } from '../../../src/runtime/controller/reconciler.ts';
import { dispatch, type Enqueuer, type MapFunc, type Watch } from '../../../src/runtime/controller/watch.ts';
import { testLogger } from '../../support/log.ts';

const obj = (name: string, owner: string, generation = 1): KubeObject => ({
  metadata: { name, namespace: 'ns', generation, labels: { owner } },
});

/** An object's event concerns the object its `owner` label names. */
const byOwner: MapFunc<KubeObject> = (o) => [
  { namespace: o.metadata?.namespace ?? '', name: o.metadata?.labels?.owner ?? '' },
];

class RecordingEnqueuer implements Enqueuer {
  readonly requests: string[] = [];
  enqueue(request: Request): void {
    this.requests.push(`${request.namespace}/${request.name}`);
  }
}

describe('dispatch', () => {
  it('an update whose old and new object concern the same object enqueues it once', () => {
    const enqueuer = new RecordingEnqueuer();
    const watch: Watch<KubeObject> = { map: byOwner, predicates: [] };
    const handler = dispatch<KubeObject>([], () => [watch], enqueuer);
    handler.onUpdate?.(obj('w', 'a', 1), obj('w', 'a', 2));
    assert.deepEqual(enqueuer.requests, ['ns/a']);
  });

  it('an update that moves the object to another owner enqueues both owners', () => {
    const enqueuer = new RecordingEnqueuer();
    const watch: Watch<KubeObject> = { map: byOwner, predicates: [] };
    const handler = dispatch<KubeObject>([], () => [watch], enqueuer);
    handler.onUpdate?.(obj('w', 'a'), obj('w', 'b'));
    assert.deepEqual(enqueuer.requests, ['ns/a', 'ns/b']);
  });

  it('an update the predicates reject enqueues nothing', () => {
    const enqueuer = new RecordingEnqueuer();
    const watch: Watch<KubeObject> = { map: byOwner, predicates: [{ update: () => false }] };
    dispatch<KubeObject>([], () => [watch], enqueuer).onUpdate?.(obj('w', 'a', 1), obj('w', 'a', 2));
    assert.deepEqual(enqueuer.requests, []);
  });

  describe('on a running controller with an idle worker', () => {
    const controller = new Controller(
      { name: 'dispatch-test', concurrency: 1, drainTimeoutMs: 100 },
      {
        reconcile: async (request: Request) => {
          reconciled.push(`${request.namespace}/${request.name}`);
          return undefined;
        },
      },
      new Registry(),
      testLogger(),
    );
    const reconciled: string[] = [];
    after(() => controller.stop({ abortInFlight: true }));

    it('one update is one reconcile', async () => {
      controller.start();
      const handler = dispatch<KubeObject>([], () => [{ map: byOwner, predicates: [] }], controller);
      handler.onUpdate?.(obj('w', 'a', 1), obj('w', 'a', 2));
      await waitFor('the reconcile', () => reconciled.length > 0, { timeoutMs: 5000, intervalMs: 5 });
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(reconciled, ['ns/a']);
    });
  });
});
