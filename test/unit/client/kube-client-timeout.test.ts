import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { PriorityThrottle } from '../../../src/runtime/client/priority-throttle.ts';
import { TokenBucket } from '../../../src/runtime/queue/token-bucket.ts';

// A server that misbehaves on purpose (no API server can be made to hang on demand): /hang never
// answers, /stall sends its headers and never ends the body, anything else answers at once.
describe('KubeClient request timeout', () => {
  let server: Server;
  const open = new Set<ServerResponse>();
  let url = '';

  before(async () => {
    server = createServer((req, res) => {
      open.add(res);
      if (req.url?.startsWith('/hang')) return;
      if (req.url?.startsWith('/stall')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"kind":');
        return;
      }
      res.end('{"kind":"Status"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    for (const res of open) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  function client(options: ConstructorParameters<typeof KubeClient>[1] = {}) {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return new KubeClient(kc, options);
  }

  it('gives up on a server that never answers, with a TimeoutError', async () => {
    const started = Date.now();
    await assert.rejects(client().request('GET', '/hang', { timeoutMs: 150 }), { name: 'TimeoutError' });
    assert.ok(Date.now() - started < 5000);
  });

  it('counts the body: a response that never ends times out too', async () => {
    await assert.rejects(client({ defaultTimeoutMs: 150 }).request('GET', '/stall'), {
      name: 'TimeoutError',
    });
  });

  it('does not count the wait for the rate limit', async () => {
    // 4 qps, burst 1: the second request waits about 250 ms for its token, longer than its timeout.
    const c = client({ throttle: new PriorityThrottle(new TokenBucket(4, 1)), defaultTimeoutMs: 150 });
    await c.request('GET', '/ok');
    const started = Date.now();
    assert.deepEqual(await c.request('GET', '/ok'), { kind: 'Status' });
    assert.ok(Date.now() - started >= 150, 'it did wait for its token');
  });

  it('a caller abort still ends the request', async () => {
    const caller = new AbortController();
    const pending = client().request('GET', '/hang', { signal: caller.signal });
    setTimeout(() => caller.abort(new Error('stopping')), 50);
    await assert.rejects(pending, /stopping/);
  });
});
