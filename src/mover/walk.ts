import { type BigIntStats, lstatSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { FsError, onPath } from './errors.ts';

/**
 * What an entry of a tree is, for copying and for the manifest. A `hardlink` is a regular file whose
 * inode an earlier entry of the walk already was; `special` is a socket, FIFO or device.
 */
export type EntryKind = 'dir' | 'file' | 'hardlink' | 'symlink' | 'special';

export interface TreeEntry {
  /** The path below the root, as raw bytes, parts joined with "/"; "." for the root itself. */
  readonly rel: Buffer;
  readonly abs: Buffer;
  readonly stats: BigIntStats;
  readonly kind: EntryKind;
  /** For a hard link: `rel` of the first entry of the walk with the same inode. */
  readonly linkOf?: Buffer;
}

export interface TreeVisitor {
  /** Called for every entry, parents before their contents. */
  enter(entry: TreeEntry): void;
  /** Called for every directory once its contents have been visited (not for one skipped). */
  leave?(dir: TreeEntry): void;
  /** A directory could not be listed: true skips its contents, otherwise the walk fails with `error`. */
  skipUnlistable?(dir: TreeEntry, error: FsError): boolean;
}

const ROOT_REL = Buffer.from('.');
const SLASH = Buffer.from('/');

/**
 * Visits the tree below `root` (the root included) depth first, the entries of a directory in the
 * order of their names' raw bytes, without following symlinks. Memory: the sorted names of the
 * directories on the current path, and the inodes of files with more than one link.
 */
export function walkTree(root: string, visitor: TreeVisitor): void {
  const abs = Buffer.from(resolve(root));
  const stats = onPath(abs, 'lstat', () => lstatSync(abs, { bigint: true }));
  new Walk(visitor).visit({ rel: ROOT_REL, abs, stats, kind: kindOf(stats) });
}

class Walk {
  readonly #visitor: TreeVisitor;
  /** `dev:ino` of each multiply linked file seen, to the first path it was seen at. */
  readonly #linked = new Map<string, Buffer>();

  constructor(visitor: TreeVisitor) {
    this.#visitor = visitor;
  }

  visit(entry: TreeEntry): void {
    this.#visitor.enter(entry);
    if (entry.kind !== 'dir') return;
    let names: Buffer[];
    try {
      names = onPath(entry.abs, 'scandir', () => readdirSync(entry.abs, { encoding: 'buffer' }));
    } catch (error) {
      if (error instanceof FsError && this.#visitor.skipUnlistable?.(entry, error)) return;
      throw error;
    }
    names.sort(Buffer.compare);
    for (const name of names) {
      const abs = Buffer.concat([entry.abs, SLASH, name]);
      const rel = entry.rel === ROOT_REL ? name : Buffer.concat([entry.rel, SLASH, name]);
      const stats = onPath(abs, 'lstat', () => lstatSync(abs, { bigint: true }));
      this.visit(this.#classify(rel, abs, stats));
    }
    this.#visitor.leave?.(entry);
  }

  #classify(rel: Buffer, abs: Buffer, stats: BigIntStats): TreeEntry {
    const kind = kindOf(stats);
    if (kind !== 'file' || stats.nlink < 2n) return { rel, abs, stats, kind };
    const inode = `${stats.dev}:${stats.ino}`;
    const first = this.#linked.get(inode);
    if (first !== undefined) return { rel, abs, stats, kind: 'hardlink', linkOf: first };
    this.#linked.set(inode, rel);
    return { rel, abs, stats, kind };
  }
}

function kindOf(stats: BigIntStats): EntryKind {
  if (stats.isDirectory()) return 'dir';
  if (stats.isFile()) return 'file';
  if (stats.isSymbolicLink()) return 'symlink';
  return 'special';
}

/** What a special entry is, in words. */
export function specialKind(stats: BigIntStats): string {
  if (stats.isFIFO()) return 'FIFO';
  if (stats.isSocket()) return 'socket';
  if (stats.isBlockDevice()) return 'block device';
  if (stats.isCharacterDevice()) return 'character device';
  return 'file of unknown type';
}
