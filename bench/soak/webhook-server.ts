import { createServer } from 'node:https';

/**
 * The refusing webhook's server, in a process of its own (forked by webhook.ts): its TLS and its
 * 40 KiB answers must not share an event loop with the soak, which times the normal tenant's hops.
 * Setup arrives as the first IPC message; the port and each answered review go back over IPC.
 */
interface Setup {
  cert: string;
  key: string;
  message: string;
}

process.once('message', (setup: Setup) => {
  let calls = 0;
  const server = createServer({ cert: setup.cert, key: setup.key });
  server.on('request', (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const uid = (JSON.parse(body) as { request?: { uid?: string } }).request?.uid;
      res.setHeader('Content-Type', 'application/json');
      res.end(
        JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: {
            uid,
            allowed: false,
            status: { code: 403, reason: 'Forbidden', message: setup.message },
          },
        }),
      );
      process.send?.({ calls: ++calls });
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
  });
});
// The soak gone (or done): so is the server.
process.on('disconnect', () => process.exit(0));
