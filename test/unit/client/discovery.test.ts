// ResourceDiscovery against the fake API server's discovery: a kind's resource, the cache, the
// bounded refresh on a miss, shared requests, 404 and 403.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResourceDiscovery } from '../../../src/runtime/client/discovery.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { FakeApiServer } from '../../support/fake/api-server.ts';
import { asKubeClient, FakeClient } from '../../support/fake/client.ts';

const WIDGET = { group: 'example.dev', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };
const GADGET = { group: 'example.dev', version: 'v1', kind: 'Gadget', plural: 'gadgets', namespaced: false };

function setup() {
  const server = new FakeApiServer();
  const client = new FakeClient(server);
  let now = 0;
  const discovery = new ResourceDiscovery(asKubeClient(client), { minRefreshMs: 1000, now: () => now });
  const requests = () =>
    client.actions.map((a) => `${a.verb} ${a.name}${a.error ? ` ${a.error.statusCode}` : ''}`);
  return { server, client, discovery, requests, advance: (ms: number) => (now += ms) };
}

describe('ResourceDiscovery', () => {
  it("finds a kind's plural and scope in its group/version, and asks once", async () => {
    const { server, discovery, requests } = setup();
    server.serve(WIDGET, GADGET);
    assert.deepEqual(await discovery.lookup('example.dev/v1', 'Widget'), { found: true, resource: WIDGET });
    assert.deepEqual(await discovery.lookup('example.dev/v1', 'Gadget'), { found: true, resource: GADGET });
    assert.deepEqual(discovery.cached('example.dev/v1', 'Widget'), WIDGET);
    assert.deepEqual(requests(), ['get /apis/example.dev/v1']);
  });

  it('reads the core group at /api/v1', async () => {
    const { server, discovery, requests } = setup();
    server.serve(CoreTypes.Pod);
    const answer = await discovery.lookup('v1', 'Pod');
    assert.equal(answer.found && answer.resource.plural, 'pods');
    assert.deepEqual(requests(), ['get /api/v1']);
  });

  it('a miss reads again, at most once per interval, and says when to look again', async () => {
    const { server, discovery, requests, advance } = setup();
    assert.deepEqual(await discovery.lookup('example.dev/v1', 'Widget'), { found: false });
    advance(400);
    assert.deepEqual(await discovery.lookup('example.dev/v1', 'Widget'), { found: false, retryAfterMs: 600 });
    assert.deepEqual(requests(), ['get /apis/example.dev/v1 404'], 'a group/version nobody serves is a 404');
    server.serve(WIDGET);
    advance(600);
    assert.deepEqual(await discovery.lookup('example.dev/v1', 'Widget'), { found: true, resource: WIDGET });
    assert.deepEqual(requests(), ['get /apis/example.dev/v1 404', 'get /apis/example.dev/v1']);
  });

  it('lookups at the same time share one request', async () => {
    const { server, discovery, requests } = setup();
    server.serve(WIDGET);
    const answers = await Promise.all([
      discovery.lookup('example.dev/v1', 'Widget'),
      discovery.lookup('example.dev/v1', 'Gadget'),
    ]);
    assert.deepEqual(
      answers.map((a) => a.found),
      [true, false],
    );
    assert.deepEqual(requests(), ['get /apis/example.dev/v1']);
  });

  it('throws what the server refuses other than 404 (a 403), and caches nothing for it', async () => {
    const { server, client, discovery, requests } = setup();
    server.serve(WIDGET);
    client.fail({ kind: 'Discovery' }, new ApiError(403, 'Forbidden', 'forbidden'), { times: 1 });
    await assert.rejects(discovery.lookup('example.dev/v1', 'Widget'), (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.statusCode, 403);
      return true;
    });
    assert.equal((await discovery.lookup('example.dev/v1', 'Widget')).found, true);
    assert.deepEqual(requests(), ['get /apis/example.dev/v1 403', 'get /apis/example.dev/v1']);
  });
});
