import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { run, runOk } from '../exec.ts';
import { withFileLock } from '../local/lock.ts';
import { cacheRoot } from '../local/toolchain.ts';
import { type ContainerEngine, imageId, imageLabels } from './engine.ts';

/** The label every locally built image carries: the fingerprint of what it was built from. */
export const FINGERPRINT_LABEL = 'dev.basicoperator.fingerprint';

export interface ImageRecipe {
  /** The reference the image is built under (and tagged as, for what expects it by that name). */
  ref: string;
  /** Everything whose change must rebuild the image (versions, file contents, parent fingerprints). */
  inputs: ReadonlyArray<string | Buffer>;
  /** Builds the image under `ref` with the label FINGERPRINT_LABEL=fingerprint. */
  build(fingerprint: string): Promise<void>;
}

export function fingerprintOf(inputs: ReadonlyArray<string | Buffer>): string {
  const hash = createHash('sha256');
  for (const input of inputs) {
    hash.update(input);
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

export function imageCacheDir(): string {
  return join(cacheRoot(), 'kind', 'images');
}

function say(message: string): void {
  process.stderr.write(`[images] ${message}\n`);
}

/**
 * The image with this recipe's fingerprint, in the engine: already there, loaded from the archive
 * cached under the cache folder, or built (and then archived there, so a new engine store, as in
 * a fresh CI machine with a warm cache, loads instead of building). Returns the fingerprint.
 * Runs under a machine-wide lock per image (two test runs never build the same image at once) and
 * removes the image a rebuild replaced (left untagged otherwise; kept while a container uses it).
 */
export function ensureImage(engine: ContainerEngine, recipe: ImageRecipe): Promise<string> {
  const lock = join(imageCacheDir(), `${recipe.ref.replaceAll(/[/:@]/g, '_')}.lock`);
  return withFileLock(lock, 60 * 60_000, async () => {
    const before = await imageId(engine, recipe.ref);
    const fingerprint = await ensureUnlocked(engine, recipe);
    const after = await imageId(engine, recipe.ref);
    if (before && before !== after) await run(engine.bin, ['image', 'rm', before]);
    return fingerprint;
  });
}

async function ensureUnlocked(engine: ContainerEngine, recipe: ImageRecipe): Promise<string> {
  const fingerprint = fingerprintOf([recipe.ref, ...recipe.inputs]);
  const labels = await imageLabels(engine, recipe.ref);
  if (labels?.[FINGERPRINT_LABEL] === fingerprint) return fingerprint;
  const dir = imageCacheDir();
  mkdirSync(dir, { recursive: true });
  const stem = recipe.ref.replaceAll(/[/:@]/g, '_');
  const archive = join(dir, `${stem}-${fingerprint}.tar`);
  if (existsSync(archive)) {
    say(`loading ${recipe.ref} from ${archive}`);
    await runOk(engine.bin, ['load', '-i', archive]);
    if ((await imageLabels(engine, recipe.ref))?.[FINGERPRINT_LABEL] === fingerprint) return fingerprint;
  }
  const started = Date.now();
  say(`building ${recipe.ref}`);
  await recipe.build(fingerprint);
  const built = await imageLabels(engine, recipe.ref);
  if (built?.[FINGERPRINT_LABEL] !== fingerprint) {
    throw new Error(`building ${recipe.ref} did not label it ${FINGERPRINT_LABEL}=${fingerprint}`);
  }
  // Older archives of the same image are replaced by this one.
  for (const old of readdirSync(dir)) {
    if (old.startsWith(`${stem}-`) && old.endsWith('.tar')) rmSync(join(dir, old), { force: true });
  }
  await runOk(engine.bin, ['save', '-o', `${archive}.partial`, recipe.ref]);
  renameSync(`${archive}.partial`, archive);
  say(`built ${recipe.ref} in ${((Date.now() - started) / 1000).toFixed(0)}s`);
  return fingerprint;
}
