import { type BigIntStats, chmodSync, lstatSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { onPath } from './errors.ts';

const SLASH = Buffer.from('/');

/**
 * Removes everything inside `dir`, keeping `dir` itself (a mount point). A retry finds the partial
 * copy of an earlier attempt there, possibly with directories already given a final mode that
 * forbids writing (0500): a non-root copy owns them and makes them writable first.
 */
export function emptyDirectory(dir: string, uid: number): void {
  const path = Buffer.from(dir);
  makeWritable(
    path,
    onPath(path, 'lstat', () => lstatSync(path, { bigint: true })),
    uid,
  );
  removeContents(path, uid);
}

function removeContents(dir: Buffer, uid: number): void {
  for (const name of onPath(dir, 'scandir', () => readdirSync(dir, { encoding: 'buffer' }))) {
    const path = Buffer.concat([dir, SLASH, name]);
    const stats = onPath(path, 'lstat', () => lstatSync(path, { bigint: true }));
    if (stats.isDirectory()) {
      makeWritable(path, stats, uid);
      removeContents(path, uid);
      onPath(path, 'rmdir', () => rmdirSync(path));
    } else {
      onPath(path, 'unlink', () => unlinkSync(path));
    }
  }
}

/** Root writes anywhere; another user can only chmod what it owns. */
function makeWritable(dir: Buffer, stats: BigIntStats, uid: number): void {
  const rwx = 0o700n;
  if (uid === 0 || Number(stats.uid) !== uid || (stats.mode & rwx) === rwx) return;
  onPath(dir, 'chmod', () => chmodSync(dir, Number(stats.mode & 0o7777n) | 0o700));
}
