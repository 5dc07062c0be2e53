import { chmodSync, chownSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot } from '../../local/toolchain.ts';

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
