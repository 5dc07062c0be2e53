import type { RequestOptions as HttpsRequestOptions } from 'node:https';
import { createSecureContext, type SecureContext } from 'node:tls';

/** What every connection to the API server is opened with. */
export interface TlsConnectOptions {
  secureContext: SecureContext;
  rejectUnauthorized: boolean | undefined;
  servername: string | undefined;
}

/**
 * The TLS side of the client's connections: one SecureContext (CA, client certificate and key,
 * parsed once) shared by every connection the pool opens. Given as `ca`, `cert` and `key`, Node
 * parses them again for each new connection, 2 to 5 ms on the event loop each time the pool grows.
 */
export function tlsConnectOptions(opts: HttpsRequestOptions): TlsConnectOptions {
  return {
    secureContext: createSecureContext({ ca: opts.ca, cert: opts.cert, key: opts.key }),
    rejectUnauthorized: opts.rejectUnauthorized,
    servername: opts.servername ?? undefined,
  };
}
