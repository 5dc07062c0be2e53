import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The ports a kwokctl cluster listens on, as its kwok.yaml records them (`...Port: N`). */
export function clusterPorts(kwokYaml: string): number[] {
  const text = readFileSync(kwokYaml, 'utf8');
  return [...text.matchAll(/^\s+\w+Port: (\d+)$/gm)].map((m) => Number(m[1])).filter((p) => p > 0);
}

/** Whether something on this machine listens on `port` already. */
export function portTaken(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(true));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(false)));
  });
}

/** The ports of `ports` that something on this machine listens on. */
export async function takenPorts(ports: number[]): Promise<number[]> {
  const taken = await Promise.all(ports.map(portTaken));
  return ports.filter((_, i) => taken[i]);
}
