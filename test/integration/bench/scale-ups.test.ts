import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ScalableObject, ScaleUps } from '../../../bench/measure/scale-ups.ts';
import { testClient } from '../../../e2e/support/cluster.ts';
import { resourceOf } from '../../../src/runtime/client/resource.ts';

/** A resource the API server does not serve: every list of it fails with 404. */
const MISSING = resourceOf<ScalableObject>()({
  group: 'bench.basicoperator.dev',
  version: 'v1',
  kind: 'Missing',
  plural: 'missings',
  namespaced: true,
});

describe("the bench's scale-up watch", () => {
  it('fails its wait for the first list by its deadline, with the error, and retries with a pause meanwhile', async () => {
    const client = await testClient();
    const list = client.list.bind(client);
    let lists = 0;
    client.list = (type, options) => {
      lists++;
      return list(type, options);
    };
    const stop = new AbortController();
    try {
      const scaleUps = new ScaleUps(client, MISSING, 'default', stop.signal, (o) => o.metadata?.name, 2000);
      await assert.rejects(scaleUps.listed, (err: Error) => {
        assert.match(err.message, /^missings in default not listed within 2000 ms: GET \S+\/missings: /);
        return true;
      });
      // Backing off from 100 ms, doubling, gives about five tries in 2 s; a loop without a pause,
      // hundreds.
      assert.ok(lists >= 2 && lists <= 10, `${lists} lists in 2 s`);
    } finally {
      stop.abort();
    }
  });
});
