import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { issueCertificate } from '../../src/runtime/manager/metrics/x509.ts';

export interface IssuedCertificate {
  /** tls.crt, tls.key and ca.crt, PEM: a cert-manager Certificate's Secret. */
  'tls.crt': string;
  'tls.key': string;
  'ca.crt': string;
}

/** A throwaway CA and a serving certificate it signs for localhost and 127.0.0.1. */
export function issueServingCertificate(commonName: string): IssuedCertificate {
  const validity = {
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 24 * 3_600_000),
  };
  const caKeys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ca = issueCertificate({
    commonName: `${commonName} CA`,
    publicKey: caKeys.publicKey,
    signingKey: caKeys.privateKey,
    ca: true,
    ...validity,
  });
  const keys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const leaf = issueCertificate({
    commonName,
    issuerCommonName: `${commonName} CA`,
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1'],
    ...validity,
  });
  return {
    'tls.crt': leaf,
    'tls.key': keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    'ca.crt': ca,
  };
}

/**
 * Writes `files` into `dir` as the kubelet mounts a Secret: the files live in a timestamped
 * folder, `..data` links to it, and each name links through `..data`. Writing again swaps
 * `..data` atomically, as the kubelet does when the Secret changes.
 */
export function writeSecretVolume(dir: string, files: IssuedCertificate, version: number): void {
  const folder = `..v${version}`;
  mkdirSync(join(dir, folder), { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, folder, name), content);
  symlinkSync(folder, join(dir, '..data_tmp'));
  renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  for (const name of Object.keys(files)) {
    try {
      symlinkSync(join('..data', name), join(dir, name));
    } catch {
      // Already linked through ..data.
    }
  }
}
