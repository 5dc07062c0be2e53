import type { FSWatcher } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { Registry } from 'prom-client';
import type { Logger } from '../../log.ts';
import { metricsHandler } from '../http-servers.ts';
import { type AccessReviews, reviewScrape } from './access-review.ts';
import { type CertFiles, readCertFiles, selfSignedMaterial, watchCertFiles } from './tls-material.ts';

export interface SecureMetricsOptions {
  registry: Registry;
  reviews: AccessReviews;
  /** The certificate's files; none = a self-signed certificate made now. */
  certFiles?: CertFiles;
  log: Logger;
}

/**
 * /metrics over HTTPS, each scrape authenticated and authorized against the API server
 * (controller-runtime's default). A certificate from files is reloaded when they change; a
 * broken update keeps the certificate in use and says why in the log.
 */
export function secureMetricsServer(options: SecureMetricsOptions): Server {
  const { certFiles, log } = options;
  const material = certFiles ? readCertFiles(certFiles) : selfSignedMaterial();
  if (!certFiles) log.info('serving metrics with a self-signed certificate (no --metrics-cert-path)');
  // One warning a minute at most while unknown tokens are throttled, with how many were refused.
  let throttled = 0;
  let warnedAt = Number.NEGATIVE_INFINITY;
  const server = createServer(
    { ...material, minVersion: 'TLSv1.2' },
    metricsHandler(options.registry, async (request) => {
      const decision = await reviewScrape(options.reviews, request);
      // A refused scrape is the scraper's business; a review that failed is ours (RBAC, API server).
      if (decision.status === 500)
        log.error('a metrics scrape could not be reviewed', { error: decision.message });
      if (decision.status === 429) {
        throttled++;
        if (Date.now() - warnedAt >= 60_000) {
          log.warn('refusing metrics scrapes with unknown bearer tokens: too many to review', {
            refused: throttled,
          });
          warnedAt = Date.now();
          throttled = 0;
        }
      }
      return decision;
    }),
  );
  if (certFiles) {
    const watcher: FSWatcher = watchCertFiles(certFiles.dir, () => {
      try {
        server.setSecureContext({ ...readCertFiles(certFiles), minVersion: 'TLSv1.2' });
        log.info('reloaded the metrics certificate', { dir: certFiles.dir });
      } catch (err) {
        log.error('could not reload the metrics certificate; keeping the one in use', {
          dir: certFiles.dir,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    });
    server.on('close', () => watcher.close());
  }
  return server;
}
