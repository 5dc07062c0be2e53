// `npm run contract-test` as a user runs it: the CLI's output and exit codes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CHECK_NAMES } from '../../../e2e/contract/report.ts';
import { run } from '../../../e2e/providers/exec.ts';
import { testCluster } from '../../../e2e/support/cluster.ts';

const MAIN = fileURLToPath(new URL('../../../e2e/contract/main.ts', import.meta.url));
const cli = (args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, [MAIN, ...args], { env });

describe('contract-test CLI', () => {
  it('prints the usage for --help and exits 0', async () => {
    const result = await cli(['--help']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^usage: npm run contract-test -- --kind <Kind>\.<group> \[options\]/);
  });

  it('exits 2 with the problem and the usage on bad arguments', async () => {
    const result = await cli(['--kind', 'PodMachine']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^--kind "PodMachine" is not <Kind>\.<group>.*\n\nusage: /);
    assert.equal(result.stdout, '');
  });

  it('exits 2 when the sample cannot be read', async () => {
    const result = await cli([
      '--kind',
      'PodMachine.infra.basicoperator.dev',
      '--sample',
      '/nonexistent.yaml',
    ]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /contract-test: --sample \/nonexistent\.yaml: ENOENT/);
  });

  it('prints a line per check and exits 1 for a kind without a CRD', async () => {
    const { kubeconfig } = await testCluster();
    const result = await cli(['--kind', 'Missing.contract-kit.test.basicoperator.dev'], {
      KUBECONFIG: kubeconfig,
    });
    assert.equal(result.code, 1, result.stderr);
    const lines = result.stdout.trimEnd().split('\n');
    assert.equal(lines.length, CHECK_NAMES.length + 1, result.stdout);
    assert.match(
      lines[0] ?? '',
      /^FAIL {2}crd-found {16}no CustomResourceDefinition has group contract-kit\.test\.basicoperator\.dev and kind Missing; /,
    );
    for (const [i, check] of CHECK_NAMES.slice(1).entries()) {
      assert.match(lines[i + 1] ?? '', new RegExp(`^SKIP  ${check} +needs crd-found$`));
    }
    assert.equal(
      lines.at(-1),
      `does NOT conform to the Machine infrastructure contract v1: 0 passed, 1 failed, ${CHECK_NAMES.length - 1} skipped`,
    );
  });
});
