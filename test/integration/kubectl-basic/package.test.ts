// The `kubectl-basic` bin of a built package: package.json's bin, bin/ and dist/ compiled with
// tsconfig.build.json (as the image's build does), without the TypeScript sources, run by the pinned
// Node against the test cluster.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { testCluster } from '../../../e2e/support/cluster.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('kubectl-basic from a built package', () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubectl-basic-package-'));
    await run(process.execPath, [
      join(ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      join(ROOT, 'tsconfig.build.json'),
      '--outDir',
      join(dir, 'dist'),
    ]);
    await cp(join(ROOT, 'package.json'), join(dir, 'package.json'));
    await cp(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
    await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("is package.json's bin and runs dist/ when there are no sources", async () => {
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as {
      bin?: Record<string, string>;
    };
    assert.deepEqual(pkg.bin, { 'kubectl-basic': 'bin/kubectl-basic.js' });
    const bin = join(dir, pkg.bin['kubectl-basic'] ?? '');
    const help = await run(process.execPath, [bin, '--help']);
    assert.match(help.stdout, /^kubectl basic: /);
    // A real read: a name nobody uses, so the answer is the not-found line and exit code 2.
    const kubeconfig = (await testCluster()).kubeconfig;
    const missing = await run(process.execPath, [
      bin,
      'why',
      'vb/no-such-backup',
      '-n',
      'default',
      '--kubeconfig',
      kubeconfig,
    ]).then(
      () => undefined,
      (err: { code?: number; stderr?: string }) => err,
    );
    assert.equal(missing?.code, 2);
    assert.equal(missing?.stderr, 'error: VolumeBackup "no-such-backup" not found in namespace "default"\n');
  });

  it('runs as `kubectl basic` once kubectl-basic is on the PATH (as npm links a bin)', async () => {
    const cluster = await testCluster();
    const path = join(dir, 'path');
    await mkdir(path);
    await symlink(join(dir, 'bin/kubectl-basic.js'), join(path, 'kubectl-basic'));
    const env = { PATH: `${path}:${dirname(process.execPath)}`, HOME: dir, KUBECONFIG: cluster.kubeconfig };
    const result = await run(cluster.kubectl, ['basic', 'tree', 'machines', '-A', '-o', 'json'], {
      env,
    }).then(
      (ok) => ({ code: 0, ...ok }),
      (err: { code?: number; stdout?: string; stderr?: string }) => err,
    );
    // Machines of other tests may or may not exist: either a JSON list or the one-line answer.
    if (result.code === 0)
      assert.ok(Array.isArray((JSON.parse(result.stdout ?? '') as { items: unknown }).items));
    else {
      const { code, stdout, stderr } = result;
      assert.deepEqual(
        { code, stdout, stderr },
        { code: 2, stdout: '', stderr: 'error: no Machine in any namespace\n' },
      );
    }
  });
});
