import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import forge from 'node-forge';

/** A serving certificate and its key, PEM. */
export interface TlsMaterial {
  cert: string;
  key: string;
}

/** The certificate's files in a directory, as cert-manager's Secret mounts them. */
export interface CertFiles {
  dir: string;
  certName: string;
  keyName: string;
}

export function readCertFiles(files: CertFiles): TlsMaterial {
  const read = (name: string) => {
    const path = join(files.dir, name);
    try {
      return readFileSync(path, 'utf8');
    } catch (err) {
      throw new Error(
        `--metrics-cert-path: cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  };
  return { cert: read(files.certName), key: read(files.keyName) };
}

/**
 * Calls `onChange` when the directory's files change. A mounted Secret changes by swapping a
 * symlink inside the directory, which a watch of the directory sees; several events in a row
 * make one call.
 */
export function watchCertFiles(dir: string, onChange: () => void): FSWatcher {
  let timer: NodeJS.Timeout | undefined;
  const watcher = watch(dir, () => {
    clearTimeout(timer);
    timer = setTimeout(onChange, 200);
  });
  watcher.on('close', () => clearTimeout(timer));
  watcher.unref();
  return watcher;
}

/**
 * A self-signed serving certificate made at start, for when no certificate is given (as
 * controller-runtime does). Node's crypto makes the key; node-forge writes the X.509 certificate,
 * which Node's crypto cannot. Valid a year, for localhost, 127.0.0.1 and the host (pod) name;
 * scrapers skip verification of it (Prometheus: insecureSkipVerify).
 */
export function selfSignedMaterial(now = new Date()): TlsMaterial {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey);
  // A positive serial: the first byte's high bit clear.
  cert.serialNumber = `0${randomBytes(16).toString('hex').slice(1)}`;
  cert.validity.notBefore = new Date(now.getTime() - 60_000);
  cert.validity.notAfter = new Date(now.getTime() + 365 * 24 * 3_600_000);
  const name = [{ name: 'commonName', value: 'basic-operator-metrics' }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [
        { type: 2, value: 'localhost' },
        { type: 2, value: hostname() },
        { type: 7, ip: '127.0.0.1' },
      ],
    },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(privateKey), forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: privateKey };
}
