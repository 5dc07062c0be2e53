// The copy of a tree with every kind of entry, in process: the target's manifest equals the source's,
// and what the manifest does not cover (times, inode sharing, holes) is checked entry by entry.
import assert from 'node:assert/strict';
import {
  type BigIntStats,
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { computeManifest } from '../../../src/mover/manifest.ts';
import { processIdentity } from '../../../src/mover/ownership.ts';
import { runCopy } from '../../../src/mover/run.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { at, buildHardTree, isRoot, MANY, NOT_UTF8, SPARSE_SIZE } from './tree.ts';

/** Every path below `root` (root first, as ""), as bytes, parents before their contents. */
function allPaths(root: string, rel: Buffer = Buffer.alloc(0)): Buffer[] {
  const paths = [rel];
  const abs = rel.length === 0 ? Buffer.from(root) : at(root, rel);
  if (!lstatSync(abs).isDirectory()) return paths;
  for (const name of readdirSync(abs, { encoding: 'buffer' })) {
    paths.push(...allPaths(root, rel.length === 0 ? name : at(rel, name)));
  }
  return paths;
}

function statAt(root: string, rel: Buffer): BigIntStats {
  return lstatSync(rel.length === 0 ? Buffer.from(root) : at(root, rel), { bigint: true });
}

describe('the copy of a tree with every kind of entry', () => {
  const dir = tempDir('mover-copy-');
  const source = join(dir, 'source');
  const target = join(dir, 'target');
  mkdirSync(source);
  mkdirSync(target);
  buildHardTree(source);

  it('has the source manifest, and the owners, modes, times, links and holes of the source', () => {
    const report = runCopy({ source, target }, processIdentity());
    assert.deepEqual(report.target, report.source);
    assert.deepEqual(computeManifest(target), computeManifest(source));
    // Regular files: 11 named ones, one more name of hard-a, and 2,000 in many/.
    assert.equal(report.source.files, 12 + MANY);

    const paths = allPaths(source);
    assert.equal(allPaths(target).length, paths.length);
    for (const rel of paths) {
      const [from, to] = [statAt(source, rel), statAt(target, rel)];
      const name = JSON.stringify(rel.toString());
      assert.equal(to.mode, from.mode, `mode of ${name}`);
      assert.equal(to.uid, from.uid, `uid of ${name}`);
      assert.equal(to.gid, from.gid, `gid of ${name}`);
      assert.equal(to.nlink, from.nlink, `links of ${name}`);
      if (!from.isDirectory()) assert.equal(to.size, from.size, `size of ${name}`);
      assert.ok(Math.abs(Number(to.mtimeNs - from.mtimeNs)) < 1000, `mtime of ${name}`);
      assert.ok(Math.abs(Number(to.atimeNs - from.atimeNs)) < 1000, `atime of ${name}`);
      if (from.isSymbolicLink()) {
        const link = (root: string) => readlinkSync(at(root, rel), { encoding: 'buffer' });
        assert.deepEqual(link(target), link(source), `target of ${name}`);
      }
    }
  });

  it('keeps hard links as links, holes as holes, and odd names as they are', () => {
    const a = statAt(target, Buffer.from('hard-a'));
    const b = statAt(target, Buffer.from('hard-b'));
    assert.equal(a.ino, b.ino);
    assert.equal(a.nlink, 2n);

    const sparse = statAt(target, Buffer.from('sparse'));
    assert.equal(sparse.size, BigInt(SPARSE_SIZE));
    assert.ok(sparse.blocks * 512n <= 64n * 1024n, `sparse file takes ${sparse.blocks * 512n} bytes`);

    const names = readdirSync(target, { encoding: 'buffer' });
    for (const name of [Buffer.from('with space'), Buffer.from('with\nnewline'), NOT_UTF8]) {
      assert.ok(
        names.some((n) => n.equals(name)),
        `${JSON.stringify(name.toString())} is there`,
      );
    }
    assert.equal(readFileSync(at(target, NOT_UTF8), 'utf8'), 'not UTF-8\n');
    assert.deepEqual(readFileSync(join(target, 'big')), readFileSync(join(source, 'big')));
    assert.deepEqual(readdirSync(join(target, 'empty-dir')), []);
    if (isRoot) {
      assert.equal(statAt(target, Buffer.from('locked')).uid, 999n);
      assert.equal(statAt(target, Buffer.from('private')).uid, 1000n);
      assert.equal(statAt(target, Buffer.from('setgid')).mode & 0o7777n, 0o2775n);
    }
  });

  it('replaces what a failed attempt left in the target, without following its symlinks', () => {
    const outside = join(dir, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'keep'), 'not the copy’s\n');
    writeFileSync(join(target, 'leftover'), 'from the attempt before\n');
    writeFileSync(at(target, Buffer.concat([NOT_UTF8, Buffer.from('-old')])), 'old\n');
    symlinkSync(outside, join(target, 'to-outside'));
    mkdirSync(join(target, 'read-only'));
    writeFileSync(join(target, 'read-only', 'file'), 'old\n');
    chmodSync(join(target, 'read-only'), 0o500);

    const report = runCopy({ source, target }, processIdentity());
    assert.deepEqual(report.target, report.source);
    assert.equal(readFileSync(join(outside, 'keep'), 'utf8'), 'not the copy’s\n');
  });
});
