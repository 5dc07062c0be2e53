import assert from 'node:assert/strict';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { tlsConnectOptions } from '../../../src/runtime/client/tls-connect.ts';
import { Agent } from '../../../src/runtime/client/undici-agent.ts';
import { selfSignedMaterial } from '../../../src/runtime/manager/metrics/tls-material.ts';

describe('tlsConnectOptions', () => {
  const tls = selfSignedMaterial(new Date(), 'localhost');
  const sockets = new Set<unknown>();
  const server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    sockets.add(req.socket);
    // Held a moment, so concurrent requests need connections of their own.
    setTimeout(() => res.end('ok'), 20);
  });
  let origin = '';
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('opens every connection of the pool with one SecureContext that verifies the server', async () => {
    const connect = tlsConnectOptions({ ca: tls.cert, servername: 'localhost' });
    assert.deepEqual(Object.keys(connect).sort(), ['rejectUnauthorized', 'secureContext', 'servername']);
    const agent = new Agent({ connect });
    const answers = await Promise.all(
      [1, 2, 3].map(async () => (await agent.request({ origin, path: '/', method: 'GET' })).body.text()),
    );
    assert.deepEqual(answers, ['ok', 'ok', 'ok']);
    assert.equal(sockets.size, 3);
    await agent.close();
  });

  it('still refuses a server its CA did not sign', async () => {
    const other = selfSignedMaterial(new Date(), 'localhost');
    const agent = new Agent({ connect: tlsConnectOptions({ ca: other.cert, servername: 'localhost' }) });
    await assert.rejects(
      agent.request({ origin, path: '/', method: 'GET' }),
      /self.signed|unable to verify|certificate/i,
    );
    await agent.close();
  });
});
