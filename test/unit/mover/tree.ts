// Trees for the mover's tests, built with Node's synchronous file calls.
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  ftruncateSync,
  lchownSync,
  linkSync,
  lutimesSync,
  mkdirSync,
  openSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';

export const isRoot = process.getuid?.() === 0;

/** Skips a test unless it runs as root (this machine and CI do). */
export const rootOnly = { skip: !isRoot && 'needs root' };

/** `dir` joined with `name`, as bytes: names that are not UTF-8 need Buffer paths. */
export function at(dir: string | Buffer, name: string | Buffer): Buffer {
  return Buffer.concat([Buffer.from(dir), Buffer.from('/'), Buffer.from(name)]);
}

/** A name that is not valid UTF-8. */
export const NOT_UTF8 = Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe]);
export const SPARSE_SIZE = 64 * 1024 * 1024;
export const MANY = 2000;

/**
 * Times in seconds, distinct per entry, in whole milliseconds: mtimes in the past, atimes some days
 * ahead. With relatime (the default mount option) reading a file or listing a directory sets its
 * atime only when the atime is not after its mtime and ctime, so these survive the walks of tests.
 */
let mtime = 1_600_000_000;
let atime = Math.floor(Date.now() / 1000) + 10 * 86_400;
function stamp(path: string | Buffer, set: typeof utimesSync = utimesSync): void {
  mtime += 3.125;
  atime += 3.125;
  set(path, atime, mtime);
}

/**
 * Every kind of entry the mover must copy and the manifest must describe: owners other than the
 * copy's (when root), a 0700 directory of another user, setuid, setgid and sticky bits, symlinks (one
 * dangling), a hard link pair, a 64 MiB file with 4 KiB of data, empty files and directories, names
 * with a space, a newline and bytes that are not UTF-8, 2,000 small files and a file of a few MiB.
 * Times are set on everything, directories last.
 */
export function buildHardTree(root: string): void {
  const file = (name: string | Buffer, content: string | Buffer, mode = 0o644): Buffer => {
    const path = at(root, name);
    writeFileSync(path, content);
    chmodSync(path, mode);
    stamp(path);
    return path;
  };
  const dir = (name: string, mode = 0o755): Buffer => {
    const path = at(root, name);
    mkdirSync(path);
    chmodSync(path, mode);
    return path;
  };

  const secret = file('private', 'owned by 1000\n', 0o600);
  const locked = dir('locked', 0o700);
  file('locked/inside', 'inside a 0700 directory\n', 0o640);
  file('setuid', '#!/bin/true\n', 0o4755);
  const setgid = dir('setgid', 0o2775);
  file('setgid/file', 'in a setgid directory\n');
  const sticky = dir('sticky', 0o1777);

  symlinkSync('private', at(root, 'link'));
  symlinkSync('nowhere/at/all', at(root, 'dangling'));
  for (const name of ['link', 'dangling']) stamp(at(root, name), lutimesSync);

  file('hard-a', 'one inode, two names\n');
  linkSync(at(root, 'hard-a'), at(root, 'hard-b'));

  const sparse = openSync(at(root, 'sparse'), 'w');
  writeSync(sparse, randomBytes(4096), 0, 4096, SPARSE_SIZE / 2);
  ftruncateSync(sparse, SPARSE_SIZE);
  closeSync(sparse);
  stamp(at(root, 'sparse'));

  file('empty-file', '');
  const emptyDir = dir('empty-dir');
  file('with space', 'space\n');
  file('with\nnewline', 'newline\n');
  file(NOT_UTF8, 'not UTF-8\n');
  // Not a multiple of the 4 KiB block or of the 1 MiB chunk.
  file('big', randomBytes(3 * 1024 * 1024 + 123));

  const many = dir('many');
  for (let i = 0; i < MANY; i++) {
    writeFileSync(at(many, `f${i}`), `file ${i}\n`);
    stamp(at(many, `f${i}`));
  }

  for (const path of [locked, setgid, sticky, emptyDir, many]) stamp(path);
  if (isRoot) {
    lchownSync(secret, 1000, 1000);
    lchownSync(at(root, 'link'), 1000, 1000);
    lchownSync(at(locked, 'inside'), 999, 999);
    lchownSync(locked, 999, 999);
    lchownSync(setgid, 1000, 2000);
    // chown clears setgid (and setuid): set the modes again.
    chmodSync(setgid, 0o2775);
  }
  stamp(root);
}
