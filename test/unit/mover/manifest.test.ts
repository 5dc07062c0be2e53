// computeManifest: its exact definition (docs/mover.md), and that it tells trees apart by every
// property a copy must keep, but not by times.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  lchownSync,
  linkSync,
  mkdirSync,
  renameSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SpecialFileError } from '../../../src/mover/errors.ts';
import { computeManifest, parseManifest } from '../../../src/mover/manifest.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { at, NOT_UTF8, rootOnly } from './tree.ts';

const hex = (text: string | Buffer): string => Buffer.from(text).toString('hex');
const sha256 = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');

describe('computeManifest', () => {
  it('is the sha256 of one record per entry, in the order of the names’ bytes', () => {
    const root = tempDir('mover-manifest-');
    chmodSync(root, 0o755);
    writeFileSync(join(root, 'b'), 'hi\n');
    chmodSync(join(root, 'b'), 0o4640);
    linkSync(join(root, 'b'), join(root, 'a-link'));
    symlinkSync('b', join(root, 'L'));
    mkdirSync(at(root, NOT_UTF8), 0o700);
    const uid = process.getuid!();
    const gid = process.getgid!();
    const records = [
      `${hex('.')} d 0755 ${uid} ${gid}`,
      // "L" (0x4c) sorts before "a-link" (0x61), which sorts before "b": a-link is the first name
      // of the inode, so it is the file and b the hard link.
      `${hex('L')} l 0777 ${uid} ${gid} ${hex('b')}`,
      `${hex('a-link')} f 4640 ${uid} ${gid} 3 ${sha256('hi\n')}`,
      `${hex('b')} h 4640 ${uid} ${gid} ${hex('a-link')}`,
      `${hex(NOT_UTF8)} d 0700 ${uid} ${gid}`,
    ];
    assert.deepEqual(computeManifest(root), {
      files: 2,
      bytes: 3,
      digest: `sha256:${sha256(records.map((r) => `${r}\n`).join(''))}`,
    });
  });

  it('counts a file of several names once in bytes and once per name in files', () => {
    const root = tempDir('mover-manifest-');
    writeFileSync(join(root, 'one'), '12345');
    linkSync(join(root, 'one'), join(root, 'two'));
    mkdirSync(join(root, 'dir'));
    linkSync(join(root, 'one'), join(root, 'dir', 'three'));
    writeFileSync(join(root, 'empty'), '');
    symlinkSync('one', join(root, 'link'));
    const { files, bytes } = computeManifest(root);
    assert.deepEqual({ files, bytes }, { files: 4, bytes: 5 });
  });

  it('fails with SpecialFileError naming a FIFO', () => {
    const root = tempDir('mover-manifest-');
    mkdirSync(join(root, 'sub'));
    const made = spawnSync('mkfifo', [join(root, 'sub', 'pipe')]);
    assert.equal(made.status, 0, String(made.stderr));
    assert.throws(
      () => computeManifest(root),
      (error) =>
        error instanceof SpecialFileError &&
        error.reason === 'SpecialFile' &&
        error.message === `${root}/sub/pipe is a FIFO, which the copy cannot recreate`,
    );
  });
});

describe('computeManifest tells trees apart', () => {
  /** A small tree: a file, an executable, a directory with a file, a symlink and a hard link pair. */
  function build(root: string): void {
    writeFileSync(join(root, 'data'), 'some content\n');
    writeFileSync(join(root, 'run'), '#!/bin/true\n');
    chmodSync(join(root, 'run'), 0o755);
    mkdirSync(join(root, 'dir'));
    writeFileSync(join(root, 'dir', 'inner'), 'inner\n');
    symlinkSync('data', join(root, 'link'));
    writeFileSync(join(root, 'pair-1'), 'linked\n');
    linkSync(join(root, 'pair-1'), join(root, 'pair-2'));
  }

  const base = tempDir('mover-base-');
  build(base);
  const original = computeManifest(base);

  /** The manifest of a fresh tree, built as `base` was and then changed by `change`. */
  function changed(change: (root: string) => void): ReturnType<typeof computeManifest> {
    const root = tempDir('mover-changed-');
    build(root);
    change(root);
    return computeManifest(root);
  }

  it('does not depend on times or on when the tree was made', () => {
    const later = changed((root) => {
      utimesSync(join(root, 'data'), 1, 1);
      utimesSync(join(root, 'dir'), 2, 2);
    });
    assert.deepEqual(later, original);
  });

  const cases: [string, (root: string) => void][] = [
    ['one byte of content', (root) => writeFileSync(join(root, 'data'), 'some Content\n')],
    ['a mode', (root) => chmodSync(join(root, 'run'), 0o750)],
    ['a setuid bit', (root) => chmodSync(join(root, 'run'), 0o4755)],
    ["a directory's mode", (root) => chmodSync(join(root, 'dir'), 0o700)],
    ['a name', (root) => renameSync(join(root, 'dir', 'inner'), join(root, 'dir', 'inner2'))],
    [
      "a symlink's target",
      (root) => {
        unlinkSync(join(root, 'link'));
        symlinkSync('dat', join(root, 'link'));
      },
    ],
    [
      'a hard link broken into two files of the same content',
      (root) => {
        unlinkSync(join(root, 'pair-2'));
        writeFileSync(join(root, 'pair-2'), 'linked\n');
      },
    ],
  ];
  for (const [what, change] of cases) {
    it(`notices ${what}`, () => {
      assert.notEqual(changed(change).digest, original.digest);
    });
  }

  it('notices an owner and a group, of a file and of a symlink', rootOnly, () => {
    assert.notEqual(
      changed((root) => chownSync(join(root, 'data'), 1000, process.getgid!())).digest,
      original.digest,
    );
    assert.notEqual(
      changed((root) => chownSync(join(root, 'data'), process.getuid!(), 1000)).digest,
      original.digest,
    );
    assert.notEqual(changed((root) => lchownSync(join(root, 'link'), 1000, 1000)).digest, original.digest);
  });
});

describe('parseManifest', () => {
  it('reads FILES:BYTES:sha256:<hex>', () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    assert.deepEqual(parseManifest(`3:1024:${digest}`), { files: 3, bytes: 1024, digest });
  });

  it('refuses anything else with a Usage error', () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    for (const bad of [
      '',
      '3:1024',
      `3:x:${digest}`,
      '3:1024:sha256:abc',
      `3:1024:${digest.replace('sha256', 'md5')}`,
    ]) {
      assert.throws(() => parseManifest(bad), { reason: 'Usage' }, bad);
    }
  });
});
