import { createServer, type RequestListener, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import type { ScrapeDecision } from './metrics/access-review.ts';

export type Check = () => { ok: boolean; detail?: string };

function listenAddress(address: string): { host: string | undefined; port: number } {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon);
  return { host: host === '' ? undefined : host, port: Number(address.slice(colon + 1)) };
}

export async function listen(server: Server, address: string): Promise<number> {
  const { host, port } = listenAddress(address);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address();
  return typeof bound === 'object' && bound ? bound.port : port;
}

/** /healthz (the process is alive and serving) and /readyz (caches synced). */
export function healthServer(checks: { healthz: Check; readyz: Check }): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const check =
      path === '/healthz' || path === '/livez'
        ? checks.healthz
        : path === '/readyz'
          ? checks.readyz
          : undefined;
    if (!check) {
      res.writeHead(404).end('not found\n');
      return;
    }
    const result = check();
    res.writeHead(result.ok ? 200 : 503, { 'Content-Type': 'text/plain' });
    res.end(result.ok ? 'ok\n' : `not ready: ${result.detail ?? ''}\n`);
  });
}

/** Decides whether a request may read the metrics: 200 lets it through. */
export type ScrapeFilter = (request: {
  authorization: string | undefined;
  path: string;
  verb: string;
}) => Promise<ScrapeDecision>;

/** Serves the registry on /metrics, after `filter` when given. */
export function metricsHandler(registry: Registry, filter?: ScrapeFilter): RequestListener {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path !== '/metrics') {
      res.writeHead(404).end('not found\n');
      return;
    }
    const request = {
      authorization: req.headers.authorization,
      path,
      verb: (req.method ?? 'GET').toLowerCase(),
    };
    (filter ? filter(request) : Promise.resolve({ status: 200 as const }))
      .then(async (decision) => {
        if (decision.status !== 200) {
          const retryAfter =
            decision.status === 429 ? { 'Retry-After': String(decision.retryAfterSeconds) } : {};
          res
            .writeHead(decision.status, { 'Content-Type': 'text/plain', ...retryAfter })
            .end(`${decision.message}\n`);
          return;
        }
        const text = await registry.metrics();
        res.writeHead(200, { 'Content-Type': registry.contentType });
        res.end(text);
      })
      .catch((err: unknown) => {
        res.writeHead(500).end(String(err));
      });
  };
}

/** Plain HTTP /metrics, without authentication (--metrics-secure=false). */
export function metricsServer(registry: Registry): Server {
  return createServer(metricsHandler(registry));
}
