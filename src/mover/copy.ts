import {
  type BigIntStats,
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fsyncSync,
  futimesSync,
  lchownSync,
  linkSync,
  lstatSync,
  lutimesSync,
  mkdirSync,
  openSync,
  readlinkSync,
  symlinkSync,
  utimesSync,
} from 'node:fs';
import { resolve } from 'node:path';
import { FsError, onPath, SpecialFileError } from './errors.ts';
import { CHUNK_SIZE } from './manifest.ts';
import { copyContent } from './sparse.ts';
import { specialKind, type TreeEntry, walkTree } from './walk.ts';

/** How far a copy got, for the message when the target runs out of space. */
export interface CopyProgress {
  /** Bytes of file content copied so far (holes and zero blocks included). */
  bytes: number;
}

const DOT = Buffer.from('.');
const SLASH = Buffer.from('/');
const NEW_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
const EXISTING_FILE = constants.O_RDONLY | constants.O_NOFOLLOW;

/**
 * Copies the tree below `source` into the empty directory `target`, and the root's own mode, owner
 * and times onto `target`. Owners are set before modes (chown clears setuid and setgid), and a
 * directory gets its owner, mode and times only after its contents: until then it is the copy's
 * own, 0700, so writing into it needs no privilege and its mtime ends as the source's.
 */
export function copyTree(source: string, target: string, progress: CopyProgress): void {
  const root = Buffer.from(resolve(target));
  const targetOf = (rel: Buffer): Buffer => (rel.equals(DOT) ? root : Buffer.concat([root, SLASH, rel]));
  const chunk = Buffer.allocUnsafe(CHUNK_SIZE);
  walkTree(source, {
    enter: (entry) => {
      const to = targetOf(entry.rel);
      switch (entry.kind) {
        case 'dir':
          if (to !== root) onPath(to, 'mkdir', () => mkdirSync(to, { mode: 0o700 }));
          return;
        case 'file':
          return copyFile(entry, to, chunk, progress);
        case 'hardlink': {
          const first = targetOf(entry.linkOf!);
          return onPath(to, 'link', () => linkSync(first, to));
        }
        case 'symlink':
          return copySymlink(entry, to);
        case 'special':
          throw new SpecialFileError(entry.abs, specialKind(entry.stats));
      }
    },
    leave: (dir) => {
      const to = targetOf(dir.rel);
      const { uid, gid } = owner(dir.stats);
      if (to === root) copyRootAttributes(dir.stats, to);
      else {
        onPath(to, 'lchown', () => lchownSync(to, uid, gid));
        onPath(to, 'chmod', () => chmodSync(to, permissions(dir.stats)));
        onPath(to, 'utime', () => utimesSync(to, ...times(dir.stats)));
      }
      syncDirectory(to);
    },
  });
}

/**
 * The directory's entries (and the names of its files, symlinks and hard links) on disk. A
 * directory a non-root copy may not read (its own, mode 0000 or 0300) cannot be opened to sync:
 * its entries go with the file system's next commit.
 */
function syncDirectory(dir: Buffer): void {
  let fd: number;
  try {
    fd = onPath(dir, 'open', () => openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY));
  } catch (err) {
    if (err instanceof FsError && err.code === 'EACCES') return;
    throw err;
  }
  try {
    onPath(dir, 'fsync', () => fsyncSync(fd));
  } finally {
    closeSync(fd);
  }
}

/**
 * The root's owner, group and mode onto the target's root, each only where it differs: a copy that
 * is not root may not own the claim's mount point (its provisioner made it), yet needs no change
 * there when both roots match. Its times are kept where allowed; they are in no manifest.
 */
function copyRootAttributes(stats: BigIntStats, to: Buffer): void {
  const { uid, gid } = owner(stats);
  const current = onPath(to, 'lstat', () => lstatSync(to));
  if (current.uid !== uid || current.gid !== gid) onPath(to, 'lchown', () => lchownSync(to, uid, gid));
  if ((current.mode & 0o7777) !== permissions(stats))
    onPath(to, 'chmod', () => chmodSync(to, permissions(stats)));
  try {
    onPath(to, 'utime', () => utimesSync(to, ...times(stats)));
  } catch (err) {
    if (!(err instanceof FsError && err.code === 'EPERM')) throw err;
  }
}

function copyFile(entry: TreeEntry, to: Buffer, chunk: Buffer, progress: CopyProgress): void {
  const { stats } = entry;
  const from = onPath(entry.abs, 'open', () => openSync(entry.abs, EXISTING_FILE));
  try {
    const fd = onPath(to, 'open', () => openSync(to, NEW_FILE, 0o600));
    try {
      copyContent({ fd: from, path: entry.abs }, { fd, path: to }, chunk, (bytes) => {
        progress.bytes += bytes;
      });
      const { uid, gid } = owner(stats);
      onPath(to, 'fchown', () => fchownSync(fd, uid, gid));
      onPath(to, 'fchmod', () => fchmodSync(fd, permissions(stats)));
      onPath(to, 'futime', () => futimesSync(fd, ...times(stats)));
      // On disk before the copy is called complete: the source may be deleted right after.
      onPath(to, 'fsync', () => fsyncSync(fd));
    } finally {
      closeSync(fd);
    }
  } finally {
    closeSync(from);
  }
}

/** A symlink with the same target bytes; Linux has no mode for symlinks, only owner and times. */
function copySymlink(entry: TreeEntry, to: Buffer): void {
  const target = onPath(entry.abs, 'readlink', () => readlinkSync(entry.abs, { encoding: 'buffer' }));
  onPath(to, 'symlink', () => symlinkSync(target, to));
  const { uid, gid } = owner(entry.stats);
  onPath(to, 'lchown', () => lchownSync(to, uid, gid));
  onPath(to, 'lutime', () => lutimesSync(to, ...times(entry.stats)));
}

function owner(stats: BigIntStats): { uid: number; gid: number } {
  return { uid: Number(stats.uid), gid: Number(stats.gid) };
}

/** The 12 permission bits: rwx for all three, setuid, setgid, sticky. */
function permissions(stats: BigIntStats): number {
  return Number(stats.mode & 0o7777n);
}

/**
 * atime and mtime in seconds, as Node's utimes takes them: a double, exact to about a quarter of a
 * microsecond. Whole microseconds first, so a time of whole milliseconds comes back exactly.
 */
function times(stats: BigIntStats): [number, number] {
  const seconds = (ns: bigint): number => Number(ns / 1000n) / 1e6;
  return [seconds(stats.atimeNs), seconds(stats.mtimeNs)];
}
