import { runOk } from '../../exec.ts';
import { detectEngine } from '../engine.ts';
import { ensureNodeBinaries } from './binaries.ts';
import { ensureClusterImages, verifyClusterImages } from './cluster-images.ts';

/**
 * Builds what the kind node image is assembled from and shows it works:
 *   node e2e/providers/kind/node/build.ts [--verify]
 * prints the binaries' paths, the images' references and sizes, each step's time and, with
 * --verify, what each image's binary says when asked for its version.
 */
const started = Date.now();
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)}s`;

let step = Date.now();
const binaries = await ensureNodeBinaries();
process.stdout.write(`node binaries (${seconds(step)}):\n${JSON.stringify(binaries, null, 2)}\n`);

const probe = await detectEngine();
if (!probe.engine) throw new Error(probe.reason);
step = Date.now();
const refs = await ensureClusterImages(probe.engine);
process.stdout.write(`cluster images (${seconds(step)}):\n`);
for (const ref of refs) {
  const size = await runOk(probe.engine.bin, ['image', 'inspect', '--format', '{{.Size}}', ref]);
  process.stdout.write(`  ${ref}  ${(Number(size.trim()) / 1e6).toFixed(1)} MB\n`);
}

if (process.argv.includes('--verify')) {
  step = Date.now();
  const results = await verifyClusterImages(probe.engine, refs);
  for (const [ref, output] of Object.entries(results)) {
    process.stdout.write(`${ref}:\n${output.replace(/^/gm, '  ')}\n`);
  }
  process.stdout.write(`verified in ${seconds(step)}\n`);
}
process.stdout.write(`total ${seconds(started)}\n`);
