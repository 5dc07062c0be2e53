import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selectProvider } from '../e2e/providers/index.ts';

/**
 * `npm test`: everything, on a fresh machine too: type check, lint, then one node:test run over the
 * unit tests, the integration tests and the e2e suite against a cluster this script brings up
 * (building the control plane on first use). E2E_PROVIDER=kind runs the same suites on kind.
 */
function step(name: string, command: string, args: string[], env: NodeJS.ProcessEnv = process.env): void {
  process.stderr.write(`\n=== ${name}\n`);
  const started = Date.now();
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  if (result.status !== 0) {
    process.stderr.write(`=== ${name} failed (exit ${result.status})\n`);
    process.exit(result.status ?? 1);
  }
  process.stderr.write(`=== ${name} passed in ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
}

const bin = (tool: string) => `node_modules/.bin/${tool}`;
step('type check', bin('tsc'), ['-p', 'tsconfig.json', '--noEmit']);
step('lint', bin('biome'), ['check', '.']);

const onlyUnit = process.argv.includes('--unit');
const patterns = ['test/unit/**/*.test.ts'];
const env: NodeJS.ProcessEnv = { ...process.env };
if (!onlyUnit) {
  process.stderr.write('\n=== cluster\n');
  const info = await selectProvider().up();
  env.KUBECONFIG = info.kubeconfig;
  env.BASIC_OPERATOR_TEST_CLUSTER = JSON.stringify(info);
  patterns.push('test/integration/**/*.test.ts', 'e2e/suites/**/*.test.ts');
}
const tap = join(mkdtempSync(join(tmpdir(), 'basic-operator-tests-')), 'results.tap');
const result = spawnSync(
  process.execPath,
  [
    '--test',
    '--test-concurrency=2',
    '--test-timeout=900000',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=tap',
    `--test-reporter-destination=${tap}`,
    ...patterns,
  ],
  { stdio: 'inherit', env },
);
// One plain closing line, whatever the reporters above printed.
const summary = existsSync(tap) ? readFileSync(tap, 'utf8') : '';
const count = (name: string) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(summary)?.[1] ?? 0);
process.stdout.write(
  `\ntests: ${count('pass')} passed, ${count('fail') + count('cancelled')} failed, ${count('skipped')} skipped\n`,
);
process.exit(result.status ?? 1);
