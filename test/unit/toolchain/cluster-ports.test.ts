import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { clusterPorts, takenPorts } from '../../../e2e/providers/local/ports.ts';
import { tempDir } from '../../support/temp-dir.ts';

// The shape of the options kwokctl records in a cluster's kwok.yaml (ports it picked at creation).
const KWOK_YAML = `kind: KwokctlConfiguration
options:
  etcdPeerPort: 32754
  etcdPort: 32753
  kubeApiserverPort: 32752
  kubeApiserverInsecurePort: 0
  kubeControllerManagerPort: 32750
  kubeSchedulerPort: 32749
  kwokControllerPort: 32751
`;

describe('a stopped local cluster whose ports another program took', () => {
  it('reads the ports kwokctl recorded', () => {
    const file = join(tempDir('kwok-yaml-'), 'kwok.yaml');
    writeFileSync(file, KWOK_YAML);
    assert.deepEqual(clusterPorts(file), [32754, 32753, 32752, 32750, 32749, 32751]);
  });

  it('finds the ones something listens on', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const free = createServer();
      await new Promise<void>((resolve) => free.listen(0, '0.0.0.0', resolve));
      const freePort = (free.address() as { port: number }).port;
      await new Promise<void>((resolve) => free.close(() => resolve()));
      assert.deepEqual(await takenPorts([port, freePort]), [port]);
    } finally {
      server.close();
    }
  });
});
