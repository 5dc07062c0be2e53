import type { ContainerEngine } from '../engine.ts';
import { imageLabels } from '../engine.ts';
import { FINGERPRINT_LABEL } from '../image-cache.ts';
import { ensureNodeBinaries, kindFacts } from './binaries.ts';
import { ensureClusterImages } from './cluster-images.ts';
import { ensureNodeImage } from './node-image.ts';

/**
 * The kind node image for machines with no registry: the node's binaries and every image it must
 * hold, built from the Go module proxy and Debian's packages, then assembled (see node-image.ts).
 */
export async function ensureLocalNodeImage(engine: ContainerEngine): Promise<string> {
  const binaries = await ensureNodeBinaries();
  const preload = await ensureClusterImages(engine);
  const fingerprints: string[] = [];
  for (const ref of preload) fingerprints.push((await imageLabels(engine, ref))?.[FINGERPRINT_LABEL] ?? ref);
  // The CNI DaemonSet needs a shell: kind's storage helper image (busybox) is preloaded anyway.
  const cniImage = (await kindFacts()).storageHelperImage;
  return ensureNodeImage(engine, { binaries, preload, preloadFingerprints: fingerprints, cniImage });
}
