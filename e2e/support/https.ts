import { request } from 'node:https';
import { type PeerCertificate, TLSSocket } from 'node:tls';

export interface HttpsAnswer {
  status: number;
  body: string;
  /** The certificate the server presented. */
  peer: PeerCertificate;
}

/**
 * GET https://127.0.0.1:port/path with an optional bearer token. Without `ca` the server's
 * certificate is not verified (as a scraper of a self-signed endpoint does); with it, it must
 * chain to `ca` and name `servername`.
 */
export function httpsGet(
  port: number,
  path: string,
  options: { token?: string; ca?: string; servername?: string } = {},
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'GET',
        headers: options.token ? { Authorization: `Bearer ${options.token}` } : {},
        ca: options.ca,
        servername: options.servername,
        rejectUnauthorized: options.ca !== undefined,
        agent: false,
        timeout: 10_000,
      },
      (res) => {
        const socket = res.socket;
        const peer = socket instanceof TLSSocket ? socket.getPeerCertificate() : undefined;
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => {
          if (!peer) reject(new Error('no peer certificate'));
          else resolve({ status: res.statusCode ?? 0, body, peer });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET https://127.0.0.1:${port}${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
