import { chmodSync, chownSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../exec.ts';
import { withFileLock } from '../../local/lock.ts';
import { cacheRoot } from '../../local/toolchain.ts';
import { type ContainerEngine, pipe } from '../engine.ts';
import { ensureImage, type ImageRecipe, imageCacheDir } from '../image-cache.ts';

/** Shared by the image recipes: a scratch folder to assemble a root file system in, and its import. */

/** This module's text, part of every recipe's inputs (how a tree becomes an image). */
export const TREE_SOURCE = readFileSync(fileURLToPath(import.meta.url), 'utf8');

/** distroless's /etc/nsswitch.conf: files, and DNS for host names. */
export const NSSWITCH = [
  'passwd:         files',
  'group:          files',
  'shadow:         files',
  'hosts:          files dns',
  'networks:       files',
  'protocols:      files',
  'services:       files',
  'ethers:         files',
  'rpc:            files',
  '',
].join('\n');

/** An empty scratch folder for assembling `name`'s root file system (removed by `withStaging`). */
export async function withStaging<T>(name: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = join(cacheRoot(), 'kind', 'staging', name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes a file (creating its folder) with the given mode. */
export function writeFile(root: string, path: string, content: string, mode = 0o644): void {
  const target = join(root, path);
  mkdirSync(dirname(target), { recursive: true });
  rmSync(target, { force: true }); // never write through a hard link into a cached tree
  writeFileSync(target, content, { mode });
}

/** /tmp (1777), /root and /home/nonroot (0700, owned by 65532), as in distroless images. */
export function makeHomes(root: string): void {
  for (const [path, mode, owner] of [
    ['tmp', 0o1777, 0],
    ['root', 0o700, 0],
    ['home/nonroot', 0o700, 65532],
  ] as const) {
    mkdirSync(join(root, path), { recursive: true });
    chmodSync(join(root, path), mode);
    chownSync(join(root, path), owner, owner);
  }
}

/**
 * `tar -C dir -c . | engine import`, keeping the owners the folder has (importFolder makes every
 * file root's: a Debian root file system has files of other groups, such as /etc/shadow, and
 * distroless-style images own /home/nonroot by 65532). `changes` as for importFolder.
 */
export async function importTree(
  engine: ContainerEngine,
  dir: string,
  ref: string,
  changes: readonly string[],
): Promise<void> {
  await pipe('tar', ['--numeric-owner', '--exclude=./.complete', '-C', dir, '-c', '.'], engine.bin, [
    'import',
    ...changes.flatMap((c) => ['--change', c]),
    '-',
    ref,
  ]);
}

async function imageId(engine: ContainerEngine, ref: string): Promise<string | undefined> {
  const result = await run(engine.bin, ['image', 'inspect', '--format', '{{.Id}}', ref]);
  return result.code === 0 ? result.stdout.trim() : undefined;
}

/**
 * ensureImage under a machine-wide lock per image (two test runs never build the same image at
 * once), removing the image a rebuild replaced (left untagged otherwise; kept if still in use).
 */
export async function ensureImageLocked(engine: ContainerEngine, recipe: ImageRecipe): Promise<string> {
  const lock = join(imageCacheDir(), `${recipe.ref.replaceAll(/[/:@]/g, '_')}.lock`);
  return withFileLock(lock, 60 * 60_000, async () => {
    const before = await imageId(engine, recipe.ref);
    const fingerprint = await ensureImage(engine, recipe);
    const after = await imageId(engine, recipe.ref);
    if (before && before !== after) await run(engine.bin, ['image', 'rm', before]);
    return fingerprint;
  });
}
