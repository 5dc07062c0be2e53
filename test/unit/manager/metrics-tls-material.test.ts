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
    const { cert, key } = selfSignedMaterial(now);
    const x509 = new X509Certificate(cert);
    assert.equal(x509.subject, 'CN=basic-operator-metrics');
    assert.equal(x509.issuer, x509.subject);
    assert.equal(x509.ca, false);
    assert.match(x509.subjectAltName ?? '', /DNS:localhost/);
    assert.ok(x509.checkPrivateKey(createPrivateKey(key)));
    assert.ok(new Date(x509.validFrom) <= now);
    assert.equal(new Date(x509.validTo).getUTCFullYear(), 2027);
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
