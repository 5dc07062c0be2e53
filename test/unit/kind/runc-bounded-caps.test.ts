import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../../support/temp-dir.ts';
import { REPO_ROOT } from '../packaging/manifests.ts';

const WRAPPER = join(REPO_ROOT, 'e2e', 'providers', 'kind', 'engine-setup', 'runc-bounded-caps');
const hasJq = spawnSync('jq', ['--version']).status === 0;
const root = tempDir('runc-bounded-caps-');

/** This process's capability bounding set, as a bit mask. */
function boundingSet(): bigint {
  const line = readFileSync('/proc/self/status', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('CapBnd:'));
  return BigInt(`0x${line?.split(/\s+/)[1] ?? '0'}`);
}

const SOME_CAPS = ['CAP_CHOWN', 'CAP_NET_ADMIN', 'CAP_SYS_ADMIN', 'CAP_SYS_RESOURCE', 'CAP_SYS_TIME'];
const BITS: Record<string, bigint> = {
  CAP_CHOWN: 0n,
  CAP_NET_ADMIN: 12n,
  CAP_SYS_ADMIN: 21n,
  CAP_SYS_RESOURCE: 24n,
  CAP_SYS_TIME: 25n,
};

/** Runs the wrapper with a fake runc that records its arguments. */
function runWrapper(
  args: (dir: string) => string[],
  files: (dir: string) => void,
): { dir: string; argv: string } {
  const dir = mkdtempSync(join(root, 'case-'));
  const fake = join(dir, 'runc');
  writeFileSync(fake, `#!/bin/sh\necho "$@" > "${dir}/argv"\n`);
  chmodSync(fake, 0o755);
  files(dir);
  const result = spawnSync('sh', [WRAPPER, ...args(dir)], {
    env: { ...process.env, PATH: `${dir}:${process.env.PATH}` },
    encoding: 'utf8',
  });
  assert.equal(result.status, 0, result.stderr);
  return { dir, argv: readFileSync(join(dir, 'argv'), 'utf8').trim() };
}

describe('runc-bounded-caps (the dockerd runtime wrapper)', { skip: !hasJq && 'needs jq' }, () => {
  const held = SOME_CAPS.filter((c) => (boundingSet() >> (BITS[c] as bigint)) & 1n);
  const capabilities = { bounding: SOME_CAPS, effective: SOME_CAPS, permitted: SOME_CAPS };

  it("cuts a container's capabilities at create down to the bounding set, then runs runc with the same arguments", () => {
    const { dir, argv } = runWrapper(
      (d) => ['--root', '/run/x', 'create', '--bundle', d, 'id1'],
      (d) => writeFileSync(join(d, 'config.json'), JSON.stringify({ process: { capabilities } })),
    );
    const spec = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as {
      process: { capabilities: Record<string, string[]> };
    };
    for (const set of Object.values(spec.process.capabilities)) assert.deepEqual(set, held);
    assert.equal(argv, `--root /run/x create --bundle ${dir} id1`);
  });

  it('does the same for the process file of an exec', () => {
    const { dir } = runWrapper(
      (d) => ['exec', '--process', join(d, 'process.json'), 'id1'],
      (d) => writeFileSync(join(d, 'process.json'), JSON.stringify({ capabilities })),
    );
    const process = JSON.parse(readFileSync(join(dir, 'process.json'), 'utf8')) as {
      capabilities: Record<string, string[]>;
    };
    for (const set of Object.values(process.capabilities)) assert.deepEqual(set, held);
  });

  it('passes commands without a spec straight through', () => {
    const { argv } = runWrapper(
      () => ['state', 'id1'],
      () => undefined,
    );
    assert.equal(argv, 'state id1');
  });
});
