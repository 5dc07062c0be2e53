import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';

export interface IssuedCertificate {
  /** tls.crt, tls.key and ca.crt, PEM: a cert-manager Certificate's Secret. */
  'tls.crt': string;
  'tls.key': string;
  'ca.crt': string;
}

function certificate(subject: string, publicKey: forge.pki.PublicKey, serial: string) {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serial;
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3_600_000);
  cert.setSubject([{ name: 'commonName', value: subject }]);
  return cert;
}

/** A throwaway CA and a serving certificate it signs for localhost and 127.0.0.1. */
export function issueServingCertificate(commonName: string): IssuedCertificate {
  const caKeys = forge.pki.rsa.generateKeyPair(2048);
  const ca = certificate(`${commonName} CA`, caKeys.publicKey, '01');
  ca.setIssuer(ca.subject.attributes);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', keyCertSign: true },
  ]);
  ca.sign(caKeys.privateKey, forge.md.sha256.create());
  const keys = forge.pki.rsa.generateKeyPair(2048);
  const leaf = certificate(commonName, keys.publicKey, '02');
  leaf.setIssuer(ca.subject.attributes);
  leaf.setExtensions([
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [
        { type: 2, value: 'localhost' },
        { type: 7, ip: '127.0.0.1' },
      ],
    },
  ]);
  leaf.sign(caKeys.privateKey, forge.md.sha256.create());
  return {
    'tls.crt': forge.pki.certificateToPem(leaf),
    'tls.key': forge.pki.privateKeyToPem(keys.privateKey),
    'ca.crt': forge.pki.certificateToPem(ca),
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
