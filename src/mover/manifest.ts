import { createHash } from 'node:crypto';
import { closeSync, constants, openSync, readlinkSync, readSync } from 'node:fs';
import { MoverError, onPath, SpecialFileError } from './errors.ts';
import { specialKind, type TreeEntry, walkTree } from './walk.ts';

/** A tree's summary: equal manifests mean equal trees (content, names, types, modes, owners, links). */
export interface Manifest {
  /** Regular files, a file with several links counted once per link. */
  readonly files: number;
  /** Sum of the sizes of regular files, each inode once. */
  readonly bytes: number;
  /** `sha256:` and 64 hex digits: the hash of every entry's record (docs/mover.md). */
  readonly digest: string;
}

/** Files are hashed in chunks of this size, so a file of any size needs this much memory. */
export const CHUNK_SIZE = 1024 * 1024;

/**
 * The manifest of the tree below `root`. Throws SpecialFileError for a socket, FIFO or device, and
 * FsError when an entry cannot be read.
 *
 * Synchronous, as all of the mover's file system calls: it runs alone in its process, one call
 * after the other, and Node's asynchronous calls made a tree of small files ten times slower
 * (each call a trip through the thread pool). Inside a server, run it in a worker.
 */
export function computeManifest(root: string): Manifest {
  const digest = createHash('sha256');
  const chunk = Buffer.allocUnsafe(CHUNK_SIZE);
  let files = 0;
  let bytes = 0;
  walkTree(root, {
    enter: (entry) => {
      digest.update(recordOf(entry, chunk));
      if (entry.kind === 'file' || entry.kind === 'hardlink') files++;
      if (entry.kind === 'file') bytes += Number(entry.stats.size);
    },
  });
  return { files, bytes, digest: `sha256:${digest.digest('hex')}` };
}

/**
 * One line per entry: `<path hex> <type> <mode> <uid> <gid>` and then, by type, `<size> <content
 * sha256>` (f), `<first path hex>` (h), `<target hex>` (l), nothing (d). The mode is the 12
 * permission bits in 4 octal digits. All fields are hex or decimal, so a space cannot be ambiguous.
 */
function recordOf(entry: TreeEntry, chunk: Buffer): string {
  const { stats } = entry;
  const mode = (Number(stats.mode) & 0o7777).toString(8).padStart(4, '0');
  const head = `${entry.rel.toString('hex')} ${TYPE_LETTERS[entry.kind]} ${mode} ${stats.uid} ${stats.gid}`;
  switch (entry.kind) {
    case 'dir':
      return `${head}\n`;
    case 'file':
      return `${head} ${stats.size} ${hashFile(entry.abs, chunk)}\n`;
    case 'hardlink':
      return `${head} ${entry.linkOf!.toString('hex')}\n`;
    case 'symlink': {
      const target = onPath(entry.abs, 'readlink', () => readlinkSync(entry.abs, { encoding: 'buffer' }));
      return `${head} ${target.toString('hex')}\n`;
    }
    case 'special':
      throw new SpecialFileError(entry.abs, specialKind(stats));
  }
}

const TYPE_LETTERS = { dir: 'd', file: 'f', hardlink: 'h', symlink: 'l', special: '?' } as const;

/** The hex sha256 of a file's content, read in chunks into `chunk`. */
function hashFile(path: Buffer, chunk: Buffer): string {
  const hash = createHash('sha256');
  const fd = onPath(path, 'open', () => openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW));
  try {
    for (;;) {
      const bytesRead = onPath(path, 'read', () => readSync(fd, chunk, 0, chunk.length, null));
      if (bytesRead === 0) break;
      hash.update(chunk.subarray(0, bytesRead));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

/** Parses `--expect`'s `FILES:BYTES:sha256:<hex>` (split at the first two colons); throws a Usage error. */
export function parseManifest(text: string): Manifest {
  const first = text.indexOf(':');
  const second = text.indexOf(':', first + 1);
  const files = text.slice(0, first);
  const bytes = text.slice(first + 1, second);
  const digest = text.slice(second + 1);
  if (first < 0 || second < 0 || !/^\d+$/.test(files) || !/^\d+$/.test(bytes) || !DIGEST.test(digest)) {
    throw new MoverError(
      'Usage',
      `--expect ${JSON.stringify(text)} is not FILES:BYTES:sha256:<64 hex digits>`,
    );
  }
  return { files: Number(files), bytes: Number(bytes), digest };
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;
