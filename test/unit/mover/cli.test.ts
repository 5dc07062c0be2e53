// src/mover/main.ts as the copy Job runs it, in a child process: its exit code, its termination log
// and what it prints, for a success and for each way a copy fails.
import assert from 'node:assert/strict';
import { type SpawnSyncOptions, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { computeManifest, type Manifest } from '../../../src/mover/manifest.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { rootOnly } from './tree.ts';

const NOBODY = 65532;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** A manifest as --expect takes it. */
const expectArg = (m: Manifest): string => `${m.files}:${m.bytes}:${m.digest}`;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  log: string;
}

/** Runs `main.ts copy` from `dir`/source to `dir`/target with `args`; the log is `dir`/termination-log. */
function copy(dir: string, args: string[] = [], options: SpawnSyncOptions = {}): Run {
  const log = join(dir, 'termination-log');
  const argv = [
    'copy',
    '--source',
    join(dir, 'source'),
    '--target',
    join(dir, 'target'),
    '--termination-log',
    log,
  ];
  const result = spawnSync(process.execPath, ['src/mover/main.ts', ...argv, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    ...options,
  });
  let written = '';
  try {
    written = readFileSync(log, 'utf8');
  } catch {}
  return {
    status: result.status,
    stdout: String(result.stdout),
    stderr: String(result.stderr),
    log: written,
  };
}

/** A directory with an empty `source` and `target`. */
function copyDir(): string {
  const dir = tempDir('mover-cli-');
  mkdirSync(join(dir, 'source'));
  mkdirSync(join(dir, 'target'));
  return dir;
}

/** The failure line: one line, `<reason>: ...`, the same on stderr as in the log. */
function assertFailure(run: Run, reason: string): string {
  assert.equal(run.status, 1, run.stderr);
  assert.equal(run.stderr, `${run.log}\n`);
  assert.ok(run.log.startsWith(`${reason}: `), run.log);
  assert.ok(!run.log.includes('\n'));
  return run.log;
}

describe('mover CLI', () => {
  it('reports a verified copy as one line of JSON, in the log and on stdout', () => {
    const dir = copyDir();
    writeFileSync(join(dir, 'source', 'a'), 'abc');
    mkdirSync(join(dir, 'source', 'sub'));
    writeFileSync(join(dir, 'source', 'sub', 'b'), 'defg');
    const run = copy(dir);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, `${run.log}\n`);
    const report = JSON.parse(run.log);
    assert.deepEqual(Object.keys(report), ['v', 'source', 'target', 'copyMs', 'manifestMs']);
    assert.equal(report.v, 1);
    assert.deepEqual(report.target, report.source);
    assert.equal(report.source.files, 2);
    assert.equal(report.source.bytes, 7);
    assert.match(report.source.digest, DIGEST);
    assert.deepEqual(report.source, computeManifest(join(dir, 'source')));
    assert.ok(Number.isInteger(report.copyMs) && report.copyMs >= 0);
    assert.ok(Number.isInteger(report.manifestMs) && report.manifestMs >= 0);
    assert.equal(readFileSync(join(dir, 'target', 'sub', 'b'), 'utf8'), 'defg');
  });

  it('restores with --expect: exit 0 when the target has that manifest, Mismatch when not', () => {
    const dir = copyDir();
    writeFileSync(join(dir, 'source', 'a'), 'abc');
    const backup = computeManifest(join(dir, 'source'));
    assert.equal(copy(dir, ['--expect', expectArg(backup)]).status, 0);

    const other = { ...backup, digest: `sha256:${'0'.repeat(64)}` };
    const log = assertFailure(copy(dir, ['--expect', expectArg(other)]), 'Mismatch');
    assert.equal(
      log,
      "Mismatch: the restored tree differs from the backup's manifest: " +
        `digest: expected ${other.digest}, restored ${backup.digest}`,
    );
  });

  it('says Usage for a bad command line', () => {
    const dir = copyDir();
    assert.match(assertFailure(copy(dir, ['--expect', '1:2:3']), 'Usage'), /--expect "1:2:3" is not/);
    assert.match(assertFailure(copy(dir, ['--no-such-flag']), 'Usage'), /--no-such-flag/);
    const nested = ['--target', join(dir, 'source')];
    assert.match(assertFailure(copy(dir, nested), 'Usage'), /overlap$/);
  });

  it('fails with SpecialFile naming a FIFO of the source', () => {
    const dir = copyDir();
    writeFileSync(join(dir, 'source', 'a'), 'abc');
    assert.equal(spawnSync('mkfifo', [join(dir, 'source', 'pipe')]).status, 0);
    const log = assertFailure(copy(dir), 'SpecialFile');
    assert.equal(
      log,
      `SpecialFile: ${join(dir, 'source', 'pipe')} is a FIFO, which the copy cannot recreate`,
    );
  });

  describe('not as root', () => {
    /** A copy directory that uid 65532 can use, with a source of its own. */
    function nobodyDir(): string {
      const dir = copyDir();
      chmodSync(dir, 0o755);
      for (const path of [dir, join(dir, 'source'), join(dir, 'target')]) chownSync(path, NOBODY, NOBODY);
      return dir;
    }
    const asNobody = { uid: NOBODY, gid: NOBODY };

    it('refuses a source with files of other users, naming them, and copies nothing', rootOnly, () => {
      const dir = nobodyDir();
      writeFileSync(join(dir, 'source', 'mine'), 'mine\n');
      chownSync(join(dir, 'source', 'mine'), NOBODY, NOBODY);
      writeFileSync(join(dir, 'source', 'theirs'), 'theirs\n', { mode: 0o600 });
      chownSync(join(dir, 'source', 'theirs'), 1000, 1000);
      const log = assertFailure(copy(dir, ['--pod-security-level', 'restricted'], asNobody), 'Ownership');
      assert.match(log, /runs as uid 65532/);
      assert.match(
        log,
        /the namespace's Pod Security level "restricted" allows copies only as a non-root user/,
      );
      assert.ok(log.includes('1 entry of the source belongs to other users'), log);
      assert.ok(log.includes(`${join(dir, 'source', 'theirs')} (1000:1000)`), log);
      assert.deepEqual(computeManifest(join(dir, 'target')).files, 0);
    });

    it('copies a source of its own, read-only directories too, again over its own copy', rootOnly, () => {
      const dir = nobodyDir();
      const source = join(dir, 'source');
      mkdirSync(join(source, 'read-only'));
      writeFileSync(join(source, 'read-only', 'file'), 'x');
      writeFileSync(join(source, 'setuid'), 'y', { mode: 0o4755 });
      for (const path of [
        join(source, 'read-only', 'file'),
        join(source, 'read-only'),
        join(source, 'setuid'),
      ]) {
        chownSync(path, NOBODY, NOBODY);
      }
      chmodSync(join(source, 'setuid'), 0o4755);
      chmodSync(join(source, 'read-only'), 0o500);
      for (let attempt = 0; attempt < 2; attempt++) {
        const run = copy(dir, [], asNobody);
        assert.equal(run.status, 0, run.stderr);
        const report = JSON.parse(run.log);
        assert.deepEqual(report.target, report.source);
      }
    });

    it(
      "copies its own files below two roots its provisioner made (root's, 0777 both): nothing to change there",
      rootOnly,
      () => {
        const dir = nobodyDir();
        for (const root of [join(dir, 'source'), join(dir, 'target')]) {
          chownSync(root, 0, 0);
          chmodSync(root, 0o777);
        }
        writeFileSync(join(dir, 'source', 'mine'), 'mine\n');
        chownSync(join(dir, 'source', 'mine'), NOBODY, NOBODY);
        const run = copy(dir, ['--pod-security-level', 'restricted'], asNobody);
        assert.equal(run.status, 0, run.log);
        const report = JSON.parse(run.log);
        assert.deepEqual(report.target, report.source);
        assert.equal(report.target.files, 1);
      },
    );

    it(
      'fails, and changes nothing silently, when the roots differ in what it may not change',
      rootOnly,
      () => {
        const dir = nobodyDir();
        chownSync(join(dir, 'source'), 0, 0);
        chmodSync(join(dir, 'source'), 0o755);
        chownSync(join(dir, 'target'), 0, 0);
        chmodSync(join(dir, 'target'), 0o777);
        const log = assertFailure(copy(dir, [], asNobody), 'IOError');
        assert.match(log, /EPERM on chmod/);
      },
    );
  });

  it('says NoSpace when the target claim is too small', rootOnly, (t) => {
    const dir = copyDir();
    const target = join(dir, 'target');
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', target]);
    if (mounted.status !== 0) {
      t.skip(`cannot mount a tmpfs: ${String(mounted.stderr).trim()}`);
      return;
    }
    try {
      writeFileSync(join(dir, 'source', 'small'), 'x');
      writeFileSync(join(dir, 'source', 'two-mib'), randomBytes(2 * 1024 * 1024));
      const log = assertFailure(copy(dir), 'NoSpace');
      assert.match(
        log,
        /^NoSpace: the target claim is too small: ENOSPC after \d+ of the source's 2097153 bytes/,
      );
      assert.ok(log.endsWith(`at ${join(target, 'two-mib')}`), log);
    } finally {
      spawnSync('umount', [target]);
    }
  });
});
