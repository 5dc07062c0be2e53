import { readFileSync } from 'node:fs';

/**
 * The Node flags the operator's image starts it with, read from the Dockerfile's ENTRYPOINT (the
 * exec form: the node binary, its flags, then the script), so the benchmark measures the same
 * process the image runs.
 */
export function imageNodeFlags(dockerfile = 'Dockerfile'): string[] {
  const line = readFileSync(dockerfile, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('ENTRYPOINT '));
  if (!line) throw new Error(`${dockerfile} has no ENTRYPOINT`);
  const entrypoint = JSON.parse(line.slice('ENTRYPOINT '.length)) as string[];
  const script = entrypoint.indexOf('dist/main.js');
  if (script < 1) throw new Error(`${dockerfile}: the ENTRYPOINT does not run dist/main.js: ${line}`);
  return entrypoint.slice(1, script);
}
