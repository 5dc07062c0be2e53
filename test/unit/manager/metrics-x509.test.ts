import assert from 'node:assert/strict';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { connect, createServer } from 'node:tls';
import { issueCertificate } from '../../../src/runtime/manager/metrics/x509.ts';

const ecKeys = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const pem = (key: { export(o: { type: 'pkcs8'; format: 'pem' }): string | Buffer }) =>
  key.export({ type: 'pkcs8', format: 'pem' }).toString();

/** Whether a TLS client that trusts only `ca` completes a handshake with a server serving `cert`. */
async function handshake(cert: string, key: string, ca: string, servername: string): Promise<boolean> {
  const server = createServer({ cert, key, minVersion: 'TLSv1.2' }, (socket) => socket.end('hello'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    // Not refused on a failed verification, so that the test reads `authorized`.
    const socket = connect({ host: '127.0.0.1', port, ca, servername, rejectUnauthorized: false });
    try {
      await once(socket, 'secureConnect');
      return socket.authorized;
    } finally {
      socket.destroy();
    }
  } finally {
    server.close();
  }
}

describe('issueCertificate', () => {
  const notBefore = new Date('2026-01-01T00:00:00Z');
  // After 2049: GeneralizedTime, where notBefore is a UTCTime.
  const notAfter = new Date('2060-01-01T00:00:00Z');

  it('issues a self-signed server certificate that Node parses, verifies and serves to a client pinning it', async () => {
    const { privateKey, publicKey } = ecKeys();
    const cert = issueCertificate({
      commonName: 'pinned',
      publicKey,
      signingKey: privateKey,
      notBefore,
      notAfter,
      dnsNames: ['localhost', 'pod-0'],
      ipAddresses: ['127.0.0.1'],
    });
    const x509 = new X509Certificate(cert);
    assert.equal(x509.subject, 'CN=pinned');
    assert.equal(x509.issuer, 'CN=pinned');
    assert.equal(x509.ca, false);
    assert.equal(x509.subjectAltName, 'DNS:localhost, DNS:pod-0, IP Address:127.0.0.1');
    assert.deepEqual(x509.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    assert.equal(new Date(x509.validFrom).toISOString(), notBefore.toISOString());
    assert.equal(new Date(x509.validTo).toISOString(), notAfter.toISOString());
    assert.match(x509.serialNumber, /^[4-7][0-9A-F]{31}$/);
    assert.ok(x509.checkPrivateKey(privateKey));
    assert.ok(x509.verify(publicKey));
    assert.ok(x509.checkHost('localhost'));
    assert.ok(x509.checkIP('127.0.0.1'));
    assert.equal(await handshake(cert, pem(privateKey), cert, 'localhost'), true);
    assert.equal(await handshake(cert, pem(privateKey), cert, 'elsewhere'), false);
  });

  it('issues a CA and a server certificate it signs, which a client trusting the CA accepts', async () => {
    const caKeys = ecKeys();
    const leafKeys = ecKeys();
    const ca = issueCertificate({
      commonName: 'test CA',
      publicKey: caKeys.publicKey,
      signingKey: caKeys.privateKey,
      notBefore,
      notAfter,
      ca: true,
    });
    const leaf = issueCertificate({
      commonName: 'leaf',
      issuerCommonName: 'test CA',
      publicKey: leafKeys.publicKey,
      signingKey: caKeys.privateKey,
      notBefore,
      notAfter,
      dnsNames: ['localhost'],
    });
    const caX509 = new X509Certificate(ca);
    const leafX509 = new X509Certificate(leaf);
    assert.equal(caX509.ca, true);
    assert.ok(leafX509.checkIssued(caX509));
    assert.ok(leafX509.verify(caKeys.publicKey));
    assert.ok(!leafX509.verify(leafKeys.publicKey));
    assert.equal(await handshake(leaf, pem(leafKeys.privateKey), ca, 'localhost'), true);
    // The leaf is no CA: a client that trusts it alone cannot chain the leaf to it.
    assert.equal(await handshake(leaf, pem(leafKeys.privateKey), leaf, 'localhost'), false);
  });

  it('refuses keys other than EC P-256, and SANs it cannot write', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const { privateKey, publicKey } = ecKeys();
    const base = { commonName: 'x', notBefore, notAfter };
    assert.throws(
      () => issueCertificate({ ...base, publicKey: rsa.publicKey, signingKey: rsa.privateKey }),
      /EC P-256 keys only/,
    );
    assert.throws(
      () => issueCertificate({ ...base, publicKey, signingKey: privateKey, ipAddresses: ['::1'] }),
      /not an IPv4 address: "::1"/,
    );
    assert.throws(
      () => issueCertificate({ ...base, publicKey, signingKey: privateKey, dnsNames: ['bad name'] }),
      /not a DNS name: "bad name"/,
    );
  });
});
