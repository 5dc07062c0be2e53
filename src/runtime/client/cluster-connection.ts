import { readFile } from 'node:fs/promises';
import type { OutgoingHttpHeaders } from 'node:http';
import type { RequestOptions } from 'node:https';
import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import { errorMessage } from '../log.ts';
import type { ClusterAccess } from './cluster-access.ts';

/** PEM from a file (read at every use, so a rotated one is picked up) or inline base64 data. */
export type PemSource = { file: string } | { data: string };

/** How to reach one API server: a kubeconfig's current context, or the in-cluster config. */
export interface ConnectionSettings {
  /** Where these came from, for messages: `kubeconfig /path, context "name"` or `in-cluster config`. */
  origin: string;
  server: string;
  certificateAuthority?: PemSource;
  clientCertificate?: PemSource;
  clientKey?: PemSource;
  insecureSkipTLSVerify?: boolean;
  tlsServerName?: string;
  token?: string;
  /** Read at every use (projected service account tokens rotate); `token` wins when both are set. */
  tokenFile?: string;
  username?: string;
  password?: string;
  /** Sent as Impersonate-User. */
  impersonate?: string;
}

/** A ClusterAccess from plain settings: what the operator uses unless a kubeconfig needs client-node. */
export class ClusterConnection implements ClusterAccess {
  readonly settings: ConnectionSettings;

  constructor(settings: ConnectionSettings) {
    let url: URL;
    try {
      url = new URL(settings.server);
    } catch {
      throw new Error(`${settings.origin}: the server ${JSON.stringify(settings.server)} is not a URL`);
    }
    // @kubernetes/client-node refuses this too (it would send the credentials in the clear).
    if (url.protocol === 'http:' && !settings.insecureSkipTLSVerify) {
      throw new Error(
        `${settings.origin}: the server ${settings.server} is plain HTTP, which is refused unless the ` +
          'cluster sets insecure-skip-tls-verify: true',
      );
    }
    this.settings = settings;
  }

  getCurrentCluster(): { server: string } {
    return { server: this.settings.server };
  }

  async applyToHTTPSOptions(opts: RequestOptions): Promise<void> {
    const s = this.settings;
    const [ca, cert, key, tokenFromFile] = await Promise.all([
      this.pem('certificate-authority', s.certificateAuthority),
      this.pem('client-certificate', s.clientCertificate),
      this.pem('client-key', s.clientKey),
      s.token || !s.tokenFile ? undefined : this.read('tokenFile', s.tokenFile),
    ]);
    if (s.insecureSkipTLSVerify) opts.rejectUnauthorized = false;
    if (s.tlsServerName) opts.servername = s.tlsServerName;
    if (ca) opts.ca = ca;
    if (cert) opts.cert = cert;
    if (key) opts.key = key;
    const headers: OutgoingHttpHeaders = {};
    if (s.impersonate) headers['Impersonate-User'] = s.impersonate;
    const token = s.token || tokenFromFile?.toString('utf8').trim();
    if (token) headers.Authorization = `Bearer ${token}`;
    opts.headers = Array.isArray(opts.headers) ? headers : { ...opts.headers, ...headers };
    if (s.username) opts.auth = `${s.username}:${s.password ?? ''}`;
  }

  private async pem(what: string, source: PemSource | undefined): Promise<Buffer | undefined> {
    if (!source) return undefined;
    return 'file' in source ? this.read(what, source.file) : Buffer.from(source.data, 'base64');
  }

  private async read(what: string, file: string): Promise<Buffer> {
    try {
      return await readFile(file);
    } catch (err) {
      throw new Error(`${this.settings.origin}: cannot read the ${what}: ${errorMessage(err)}`);
    }
  }
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * The config of a pod's service account, as @kubernetes/client-node's loadFromCluster builds it: the
 * API server from KUBERNETES_SERVICE_HOST and _PORT (plain HTTP on ports 80, 8080 and 8001, which
 * ClusterConnection then refuses as client-node does), the service account's CA and token.
 */
export function inClusterSettings(env: NodeJS.ProcessEnv, dir = SERVICE_ACCOUNT_DIR): ConnectionSettings {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new Error(
      `in-cluster config: ${join(dir, 'token')} exists but KUBERNETES_SERVICE_HOST and ` +
        'KUBERNETES_SERVICE_PORT are not both set',
    );
  }
  const scheme = port === '80' || port === '8080' || port === '8001' ? 'http' : 'https';
  return {
    origin: 'in-cluster config',
    server: `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`,
    certificateAuthority: { file: join(dir, 'ca.crt') },
    tokenFile: join(dir, 'token'),
  };
}
