import { generateKeyPairSync } from 'node:crypto';
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { issueCertificate } from './x509.ts';

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
 * controller-runtime does): an EC P-256 key from Node's crypto, the certificate from `x509.ts`.
 * Valid a year, for localhost, 127.0.0.1 and the host (pod) name; scrapers skip verification of
 * it (Prometheus: insecureSkipVerify).
 */
export function selfSignedMaterial(now = new Date(), host = hostname()): TlsMaterial {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const cert = issueCertificate({
    commonName: 'basic-operator-metrics',
    publicKey,
    signingKey: privateKey,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + 365 * 24 * 3_600_000),
    // A host name that is no DNS name (possible outside a pod) is left out, not an error.
    dnsNames: ['localhost', ...(isDnsName(host) && host !== 'localhost' ? [host] : [])],
    ipAddresses: ['127.0.0.1'],
  });
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

function isDnsName(host: string): boolean {
  return host.length <= 253 && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/i.test(host);
}
