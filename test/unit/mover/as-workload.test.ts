// A non-root copy as the workload's own user, the way a copy pod runs where Pod Security refuses
// root: a database's data directory (uid 999, 0700, files 0600) comes back with its owners, modes and
// times, files of the pod's fsGroup too; an entry of anyone else fails the copy with Ownership,
// before anything is written.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  type BigIntStats,
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { computeManifest } from '../../../src/mover/manifest.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { rootOnly } from './tree.ts';

const POSTGRES = 999;
const FS_GROUP = 70000;
/** Times no copy would make by itself, in whole seconds (the atime is not checked: see mover.md). */
const NOW = Math.floor(Date.now() / 1000);
const MTIME = NOW - 7200;
const ATIME = NOW - 3600;

interface Identity {
  uid: number;
  gid: number;
  groups: number[];
}

/** Runs `main.ts copy` from `dir`/source to `dir`/target as `who`; the termination log's line. */
function copyAs(dir: string, who: Identity): { status: number | null; log: string } {
  const log = join(dir, 'termination-log');
  // The kubelet's file, which the copy's user may write.
  writeFileSync(log, '');
  chownSync(log, who.uid, who.gid);
  const args = ['copy', '--source', join(dir, 'source'), '--target', join(dir, 'target')];
  const run = spawnSync(
    process.execPath,
    ['test/unit/mover/as-user.ts', ...args, '--termination-log', log, '--pod-security-level', 'restricted'],
    {
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        ...process.env,
        MOVER_UID: String(who.uid),
        MOVER_GID: String(who.gid),
        MOVER_GROUPS: who.groups.join(','),
      },
    },
  );
  return { status: run.status, log: readFileSync(log, 'utf8') || String(run.stderr) };
}

/**
 * Two claims' roots as the kubelet prepares them for a pod with fsGroup 70000 (root's, group 70000,
 * 2775), and below the source a PostgreSQL-like data directory of uid 999.
 */
function databaseClaims(): string {
  const dir = tempDir('mover-workload-');
  chmodSync(dir, 0o755);
  const source = join(dir, 'source');
  for (const root of [source, join(dir, 'target')]) {
    mkdirSync(root);
    chownSync(root, 0, FS_GROUP);
    chmodSync(root, 0o2775);
  }
  const pgdata = join(source, 'pgdata');
  const made: Array<[string, number, number]> = [];
  const dirAt = (path: string, mode: number, gid = POSTGRES) => {
    mkdirSync(path);
    made.push([path, mode, gid]);
  };
  const fileAt = (path: string, content: string, mode: number, gid = POSTGRES) => {
    writeFileSync(path, content);
    made.push([path, mode, gid]);
  };
  dirAt(pgdata, 0o700);
  fileAt(join(pgdata, 'PG_VERSION'), '15\n', 0o600);
  dirAt(join(pgdata, 'base'), 0o700);
  dirAt(join(pgdata, 'base', '1'), 0o700);
  fileAt(join(pgdata, 'base', '1', '1259'), 'relation pages\n'.repeat(100), 0o600);
  // Made below a setgid directory of the fsGroup, as the workload's own files on such a volume are.
  fileAt(join(source, 'shared.conf'), 'listen_addresses = *\n', 0o640, FS_GROUP);
  // Children first, so that a directory's times are set after its entries are made.
  for (const [path, mode, gid] of made.reverse()) {
    chownSync(path, POSTGRES, gid);
    chmodSync(path, mode);
    utimesSync(path, ATIME, MTIME);
  }
  return dir;
}

function statOf(path: string): BigIntStats {
  return lstatSync(path, { bigint: true });
}

const WORKLOAD: Identity = { uid: POSTGRES, gid: POSTGRES, groups: [FS_GROUP] };

describe("a non-root copy as the workload's user and groups", () => {
  it('keeps the owners, the 0700 and 0600 modes and the mtimes of its data directory', rootOnly, () => {
    const dir = databaseClaims();
    const run = copyAs(dir, WORKLOAD);
    assert.equal(run.status, 0, run.log);
    const report = JSON.parse(run.log);
    assert.deepEqual(report.target, report.source);
    assert.deepEqual(computeManifest(join(dir, 'target')), computeManifest(join(dir, 'source')));
    for (const rel of [
      'pgdata',
      'pgdata/PG_VERSION',
      'pgdata/base',
      'pgdata/base/1',
      'pgdata/base/1/1259',
      'shared.conf',
    ]) {
      const [from, to] = [statOf(join(dir, 'source', rel)), statOf(join(dir, 'target', rel))];
      assert.equal(to.mode, from.mode, `mode of ${rel}`);
      assert.equal(to.uid, BigInt(POSTGRES), `owner of ${rel}`);
      assert.equal(to.gid, from.gid, `group of ${rel}`);
      assert.equal(to.mtimeNs, BigInt(MTIME) * 1_000_000_000n, `mtime of ${rel}`);
    }
    assert.equal(statOf(join(dir, 'target', 'pgdata')).mode & 0o7777n, 0o700n);
    assert.equal(statOf(join(dir, 'target', 'shared.conf')).gid, BigInt(FS_GROUP));
  });

  it('fails with Ownership for files of its fsGroup when it does not have that group', rootOnly, () => {
    const dir = databaseClaims();
    const run = copyAs(dir, { uid: POSTGRES, gid: POSTGRES, groups: [] });
    assert.equal(run.status, 1);
    assert.match(run.log, /^Ownership: the copy runs as uid 999, not root/);
    assert.ok(run.log.includes(`${join(dir, 'source', 'shared.conf')} (999:70000)`), run.log);
    assert.deepEqual(readdirSync(join(dir, 'target')), [], 'nothing written');
  });

  it('fails with Ownership, naming them, for entries of another user, and writes nothing', rootOnly, () => {
    const dir = databaseClaims();
    const theirs = join(dir, 'source', 'pgdata', 'postmaster.pid');
    writeFileSync(theirs, '1\n', { mode: 0o600 });
    chownSync(theirs, 0, 0);
    const run = copyAs(dir, WORKLOAD);
    assert.equal(run.status, 1);
    assert.match(
      run.log,
      /^Ownership: the copy runs as uid 999, not root, and cannot give files to other users; the namespace's Pod Security level "restricted" allows copies only as a non-root user\. 1 entry of the source belongs to other users/,
    );
    assert.ok(run.log.includes(`${theirs} (0:0)`), run.log);
    assert.deepEqual(readdirSync(join(dir, 'target')), [], 'nothing written');
  });
});
