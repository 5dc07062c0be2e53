import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../../support/temp-dir.ts';

const main = (args: string[], env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = []) =>
  spawnSync(process.execPath, [...nodeArgs, 'src/main.ts', ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 30_000,
  });

describe('src/main.ts', () => {
  const dir = tempDir('bo-cli-');
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
    ].join('\n'),
  );

  it('--help lists the flags and their environment variables', () => {
    const result = main(['--help']);
    assert.equal(result.status, 0);
    assert.match(result.stdout, /--leader-elect/);
    assert.match(result.stdout, /BASIC_OPERATOR_KUBE_API_QPS/);
    // The operator's own flags, declared by main beside the manager's.
    assert.match(result.stdout, /--backup-job-image +Image of the Jobs that copy and verify volumes/);
    assert.match(
      result.stdout,
      /default "ghcr\.io\/basicoperator\/basic-operator:0\.1\.0"; env BASIC_OPERATOR_BACKUP_JOB_IMAGE/,
    );
    assert.match(result.stdout, /--volume-copy-deadline/);
    assert.match(result.stdout, /default "1h"; env BASIC_OPERATOR_VOLUME_COPY_DEADLINE/);
  });

  it('rejects bad configuration with a message naming the flag (exit 2)', () => {
    const bad = main(['--kube-api-qps', 'fast']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--kube-api-qps: "fast" must be a number >= 0/);
    const unknown = main(['--no-such-flag']);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /Unknown option '--no-such-flag'/);
    const env = main([], { BASIC_OPERATOR_LEADER_ELECTION_RENEW_DEADLINE: '20s' });
    assert.equal(env.status, 2);
    assert.match(env.stderr, /renew-deadline must be shorter than --leader-election-lease-duration/);
  });

  it("rejects bad values of the operator's own flags the same way (exit 2)", () => {
    const short = main(['--volume-copy-deadline', '500ms']);
    assert.equal(short.status, 2);
    assert.match(short.stderr, /--volume-copy-deadline: "500ms" must be at least 1s/);
    const env = main([], { BASIC_OPERATOR_VOLUME_COPY_DEADLINE: 'soon' });
    assert.equal(env.status, 2);
    assert.match(env.stderr, /--volume-copy-deadline: "soon" is not a duration/);
  });

  it('exits with a clear message when no cluster can be reached (exit 1)', () => {
    const result = main([
      '--kubeconfig',
      kubeconfig,
      '--metrics-bind-address',
      '0',
      '--health-probe-bind-address',
      '0',
    ]);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /cannot reach the Kubernetes API server at https:\/\/127\.0\.0\.1:1/);
    assert.match(result.stderr, /npm run cluster:up/);
  });

  it('exits with a clear message when the kubeconfig cannot be loaded (exit 1)', () => {
    const broken = join(dir, 'broken');
    writeFileSync(broken, 'apiVersion: v1\nkind: Config\nclusters: []\n');
    const result = main(['--kubeconfig', broken]);
    assert.equal(result.status, 1);
    assert.equal(
      result.stderr,
      `basic-operator: cannot load the kubeconfig: kubeconfig ${broken}: no current-context is set\n`,
    );
  });

  it('starts without loading @kubernetes/client-node (its generated API alone costs about 85 MiB)', () => {
    const hook = join(dir, 'record-modules.mjs');
    writeFileSync(
      hook,
      [
        "import { registerHooks } from 'node:module';",
        'const loaded = [];',
        'registerHooks({ load: (url, context, next) => (loaded.push(url), next(url, context)) });',
        "const fromClientNode = () => loaded.filter((url) => url.includes('@kubernetes/client-node'));",
        "process.on('exit', () => process.stderr.write('client-node modules: ' + fromClientNode().length + '\\n'));",
      ].join('\n'),
    );
    // Far enough to load the kubeconfig, build the manager and try the server.
    const result = main(['--kubeconfig', kubeconfig], {}, ['--import', hook]);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /cannot reach the Kubernetes API server/);
    assert.match(result.stderr, /client-node modules: 0\n/);
  });
});
