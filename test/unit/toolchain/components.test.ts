import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { forgetStalePidFiles, stoppedComponents } from '../../../e2e/providers/local/components.ts';

// Two clusters of one cache run the same components from their own bin/ folders. A cluster's pid
// file left from an earlier run (a machine restored from a snapshot, say) may name a pid the system
// has since given to the other cluster's component of the same name.
const cache = mkdtempSync(join(tmpdir(), 'components-test-'));
const clusterBin = (cluster: string) => join(cache, 'kwok', 'clusters', cluster, 'bin');
const pidFile = (cluster: string, component: string) =>
  join(cache, 'kwok', 'clusters', cluster, 'pids', `${component}.pid`);
let otherScheduler: ChildProcess;
const previousCache = process.env.BASIC_OPERATOR_CACHE;

before(() => {
  process.env.BASIC_OPERATOR_CACHE = cache;
  for (const cluster of ['mine', 'other']) {
    mkdirSync(clusterBin(cluster), { recursive: true });
    mkdirSync(join(cache, 'kwok', 'clusters', cluster, 'pids'), { recursive: true });
  }
  const binary = join(clusterBin('other'), 'kube-scheduler');
  copyFileSync('/bin/sleep', binary);
  otherScheduler = spawn(binary, ['60'], { stdio: 'ignore' });
  const pid = String(otherScheduler.pid);
  writeFileSync(pidFile('other', 'kube-scheduler'), pid);
  writeFileSync(pidFile('mine', 'kube-scheduler'), pid);
});

after(() => {
  otherScheduler.kill('SIGKILL');
  rmSync(cache, { recursive: true, force: true });
  if (previousCache === undefined) delete process.env.BASIC_OPERATOR_CACHE;
  else process.env.BASIC_OPERATOR_CACHE = previousCache;
});

test("a pid file naming another cluster's component of the same name counts as stopped", () => {
  assert.ok(stoppedComponents('mine').includes('kube-scheduler'));
  assert.ok(!stoppedComponents('other').includes('kube-scheduler'));
});

test('a stale pid file is removed so kwokctl starts the component instead of taking the pid as running', () => {
  forgetStalePidFiles('mine');
  forgetStalePidFiles('other');
  assert.equal(existsSync(pidFile('mine', 'kube-scheduler')), false);
  assert.equal(existsSync(pidFile('other', 'kube-scheduler')), true);
});
