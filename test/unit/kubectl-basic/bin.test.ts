// bin/kubectl-basic.js on a Node older than package.json's engines: one line, exit 1, no stack.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../../bin/kubectl-basic.js', import.meta.url));
const PACKAGE = new URL('../../../package.json', import.meta.url);
/** The system's Node, older than the pinned one on this machine (Node 20 at the time of writing). */
const SYSTEM_NODE = '/usr/bin/node';

function version(node: string): string {
  return spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
}

describe('bin/kubectl-basic.js', () => {
  const engines = (JSON.parse(readFileSync(PACKAGE, 'utf8')) as { engines: { node: string } }).engines.node;
  const [, major = 0, minor = 0] = /^>=(\d+)\.(\d+)$/.exec(engines)?.map(Number) ?? [];

  it('names the Node it needs in one line on an older Node, and exits 1', (t) => {
    if (!existsSync(SYSTEM_NODE)) return t.skip(`no ${SYSTEM_NODE}`);
    const found = version(SYSTEM_NODE);
    const [foundMajor = 0, foundMinor = 0] = found.split('.').map(Number);
    if (foundMajor > major || (foundMajor === major && foundMinor >= minor)) {
      return t.skip(`${SYSTEM_NODE} is Node ${found}, not older than ${major}.${minor}`);
    }
    const result = spawnSync(SYSTEM_NODE, [BIN, '--help'], { encoding: 'utf8' });
    assert.equal(result.status, 1);
    assert.equal(result.stdout, '');
    assert.equal(
      result.stderr,
      `error: kubectl-basic needs Node ${major}.${minor} or newer; ${SYSTEM_NODE} is Node ${found}\n`,
    );
  });

  it('runs on the pinned Node', () => {
    const result = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^kubectl basic: /);
  });
});
