import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readCertFiles, selfSignedMaterial } from '../../../src/runtime/manager/metrics/tls-material.ts';

describe('the metrics TLS material', () => {
  it('makes a self-signed serving certificate whose key matches, valid from now for a year', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const { cert, key } = selfSignedMaterial(now, 'operator-7d9f-abcde');
    const x509 = new X509Certificate(cert);
    assert.equal(x509.subject, 'CN=basic-operator-metrics');
    assert.equal(x509.issuer, x509.subject);
    assert.equal(x509.ca, false);
    assert.equal(x509.subjectAltName, 'DNS:localhost, DNS:operator-7d9f-abcde, IP Address:127.0.0.1');
    assert.deepEqual(x509.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    assert.ok(x509.checkPrivateKey(createPrivateKey(key)));
    assert.ok(x509.verify(x509.publicKey));
    assert.equal(new Date(x509.validFrom).toISOString(), '2025-12-31T23:59:00.000Z');
    assert.equal(new Date(x509.validTo).toISOString(), '2027-01-01T00:00:00.000Z');
  });

  it('leaves out a host name that is no DNS name', () => {
    const { cert } = selfSignedMaterial(new Date(), 'my laptop');
    assert.equal(new X509Certificate(cert).subjectAltName, 'DNS:localhost, IP Address:127.0.0.1');
  });

  it('reads tls.crt and tls.key, and names the file it cannot read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'metrics-tls-'));
    try {
      writeFileSync(join(dir, 'tls.crt'), 'CERT');
      const files = { dir, certName: 'tls.crt', keyName: 'tls.key' };
      assert.throws(
        () => readCertFiles(files),
        new RegExp(`--metrics-cert-path: cannot read ${join(dir, 'tls.key')}`),
      );
      writeFileSync(join(dir, 'tls.key'), 'KEY');
      assert.deepEqual(readCertFiles(files), { cert: 'CERT', key: 'KEY' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
