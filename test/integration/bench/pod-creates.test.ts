import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PodCreates } from '../../../bench/measure/pod-creates.ts';
import { testClient } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';

/** The bench's watch of pod creations, when the API server fails it: it carries on. */
describe("the bench's pod-creation watch", () => {
  let client: KubeClient;
  let ns = '';

  before(async () => {
    client = await testClient();
    ns = await createNamespace(client, 'bench-pods');
  });

  after(async () => {
    await deleteNamespace(client, ns);
  });

  /** Counts the lists `client` sends; `failFirst` makes the first call of `method` throw it. */
  function flaky(method: 'list' | 'watch', failFirst: Error): { client: KubeClient; lists: () => number } {
    const wrapped = Object.create(client) as KubeClient;
    let lists = 0;
    let failed = false;
    wrapped.list = (type, options) => {
      lists++;
      if (method === 'list' && !failed) {
        failed = true;
        return Promise.reject(failFirst);
      }
      return client.list(type, options);
    };
    wrapped.watch = (type, options) => {
      if (method === 'watch' && !failed) {
        failed = true;
        throw failFirst;
      }
      return client.watch(type, options);
    };
    return { client: wrapped, lists: () => lists };
  }

  async function createPod(app: string): Promise<void> {
    await client.create(CoreTypes.Pod, {
      metadata: { namespace: ns, name: app, labels: { app } },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
  }

  it('a first list that fails is retried, not an unhandled rejection', async () => {
    const stop = new AbortController();
    const { client: failing } = flaky('list', new Error('connection refused'));
    try {
      const creates = new PodCreates(failing, ns, stop.signal);
      const seen = creates.next('after-a-failed-list', 15_000);
      await new Promise((r) => setTimeout(r, 500));
      await createPod('after-a-failed-list');
      assert.equal(typeof (await seen), 'number');
    } finally {
      stop.abort();
    }
  });

  it('410 Gone starts again from a fresh list instead of asking for the expired version forever', async () => {
    const stop = new AbortController();
    const { client: expiring, lists } = flaky(
      'watch',
      new ApiError(410, 'Expired', 'too old resource version'),
    );
    try {
      const creates = new PodCreates(expiring, ns, stop.signal);
      const seen = creates.next('after-a-gone', 15_000);
      await new Promise((r) => setTimeout(r, 500));
      await createPod('after-a-gone');
      await seen;
      assert.equal(lists(), 2, 'one list to start, one after the 410');
    } finally {
      stop.abort();
    }
  });
});
