import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selectProvider } from '../e2e/providers/index.ts';
import { detectEngine } from '../e2e/providers/kind/engine.ts';
import { ControlPlaneSupervisor, describeExits } from '../e2e/providers/local/supervisor.ts';
import type { ClusterProvider } from '../e2e/providers/provider.ts';
import { releaseAndSay } from '../e2e/support/abandoned-namespaces.ts';
import { leastPrivilegeReport } from '../e2e/support/least-privilege-report.ts';
import { clustersToStop, describeClusterEnd, type SuiteCluster } from './test-all/clusters.ts';

/**
 * `npm test`: everything, on a fresh machine too: type check, lint, then one node:test run over the
 * unit tests, the integration tests and the e2e suite against the local control plane (built on
 * first use), then the e2e suite again on a kind cluster, with real containers, wherever a
 * container engine answers (it says why when it skips that part). After the local run, the operator's
 * roles are held against its requests in the API server's audit log. At the end it stops the clusters
 * it started (those not running before it), and says so. `--unit` runs the unit tests only;
 * BASIC_OPERATOR_SKIP_KIND=1 leaves kind out.
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

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
  status: number;
}

/** One node:test run over `patterns`; its counts come from its TAP file. */
async function testRun(name: string, patterns: string[], env: NodeJS.ProcessEnv): Promise<Counts> {
  process.stderr.write(`\n=== ${name}\n`);
  const started = Date.now();
  const tapDir = mkdtempSync(join(tmpdir(), 'basic-operator-tests-'));
  const tap = join(tapDir, 'results.tap');
  const child = spawn(
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
  const exitStatus = await new Promise<number | null>((resolve) =>
    child.on('close', (code) => resolve(code)),
  );
  const summary = existsSync(tap) ? readFileSync(tap, 'utf8') : '';
  rmSync(tapDir, { recursive: true, force: true });
  const count = (key: string) => Number(new RegExp(`^# ${key} (\\d+)$`, 'm').exec(summary)?.[1] ?? 0);
  const counts = {
    passed: count('pass'),
    failed: count('fail') + count('cancelled'),
    skipped: count('skipped'),
    status: exitStatus ?? 1,
  };
  process.stderr.write(
    `=== ${name}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped in ${((Date.now() - started) / 1000).toFixed(0)}s\n`,
  );
  return counts;
}

const bin = (tool: string) => `node_modules/.bin/${tool}`;
step('type check', bin('tsc'), ['-p', 'tsconfig.json', '--noEmit']);
step('lint', bin('biome'), ['check', '.']);
step('dead code', bin('knip'), []);
step('dead code outside tests', bin('knip'), ['--production']);

const runs: Counts[] = [];
if (process.argv.includes('--unit')) {
  runs.push(await testRun('unit tests', ['test/unit/**/*.test.ts'], process.env));
} else {
  // A cluster running before the run is someone else's, and stays running after it.
  const local = await runCluster(selectProvider('local'));
  const kind = await runCluster(selectProvider('kind'));
  try {
    await clusterRuns(local, kind);
  } finally {
    await stopStartedClusters([local, kind]);
  }
}

interface RunCluster extends SuiteCluster {
  provider: ClusterProvider;
  broughtUp: boolean;
}

async function runCluster(provider: ClusterProvider): Promise<RunCluster> {
  return {
    name: `${provider.name} ${provider.cluster}`,
    provider,
    runningBefore: await provider.running(),
    broughtUp: false,
  };
}

/** The local run (unit, integration and e2e tests, then the least-privilege check), then the kind run. */
async function clusterRuns(local: RunCluster, kind: RunCluster): Promise<void> {
  process.stderr.write('\n=== cluster (local provider)\n');
  local.broughtUp = true;
  const localInfo = await local.provider.up();
  await releaseAndSay(localInfo, '===');
  const since = Date.now();
  const supervisor = new ControlPlaneSupervisor(local.provider.cluster).start();
  try {
    runs.push(
      await testRun(
        'unit, integration and e2e tests (local provider)',
        ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts', 'e2e/suites/*.test.ts'],
        {
          ...process.env,
          E2E_PROVIDER: 'local',
          KUBECONFIG: localInfo.kubeconfig,
          BASIC_OPERATOR_TEST_CLUSTER: JSON.stringify(localInfo),
        },
      ),
    );
  } finally {
    await supervisor.stop();
  }
  process.stderr.write(`=== local control plane: ${describeExits(supervisor.exits)}\n`);
  runs.push(await leastPrivilege(localInfo.name, since, runs.at(-1)?.status === 0));
  const skipReason = await kindSkipReason();
  if (skipReason) {
    process.stderr.write(`\n=== kind suite SKIPPED: ${skipReason}\n`);
    return;
  }
  process.stderr.write('\n=== cluster (kind provider)\n');
  kind.broughtUp = true;
  const kindInfo = await kind.provider.up().catch((err: unknown) => {
    process.stderr.write(`=== kind cluster failed: ${err instanceof Error ? err.message : String(err)}\n`);
    return undefined;
  });
  if (kindInfo) await releaseAndSay(kindInfo, '===');
  if (!kindInfo) runs.push({ passed: 0, failed: 1, skipped: 0, status: 1 });
  else
    runs.push(
      await testRun('e2e tests (kind provider, real containers)', ['e2e/suites/**/*.test.ts'], {
        ...process.env,
        E2E_PROVIDER: 'kind',
        KUBECONFIG: kindInfo.kubeconfig,
        BASIC_OPERATOR_TEST_CLUSTER: JSON.stringify(kindInfo),
      }),
    );
}

/** Stops the clusters the run started, so nothing it needed keeps running after it (a benchmark's figures). */
async function stopStartedClusters(clusters: readonly RunCluster[]): Promise<void> {
  process.stderr.write(`\n=== ${describeClusterEnd(clusters)}\n`);
  for (const cluster of clustersToStop(clusters)) {
    await cluster.provider.stop().catch((err: unknown) => {
      process.stderr.write(
        `=== ${cluster.name} did not stop: ${err instanceof Error ? err.message : String(err)}\n`,
      );
    });
  }
}

/**
 * Every permission of the operator's roles was asked for by the operator during the run, and nothing
 * it asked for was refused (docs/install.md#rbac). Only after a run that passed: one cut short leaves
 * permissions unrequested.
 */
async function leastPrivilege(cluster: string, since: number, runPassed: boolean): Promise<Counts> {
  process.stderr.write("\n=== least privilege (the API server's audit log)\n");
  if (!runPassed) {
    process.stderr.write('=== least privilege SKIPPED: the tests failed, so the requests are incomplete\n');
    return { passed: 0, failed: 0, skipped: 1, status: 0 };
  }
  const report = await leastPrivilegeReport(cluster, since);
  for (const line of report.lines) process.stderr.write(`${line}\n`);
  process.stderr.write(`=== least privilege ${report.ok ? 'passed' : 'failed'}\n`);
  return { passed: report.ok ? 1 : 0, failed: report.ok ? 0 : 1, skipped: 0, status: report.ok ? 0 : 1 };
}

async function kindSkipReason(): Promise<string | undefined> {
  if (process.env.BASIC_OPERATOR_SKIP_KIND === '1') return 'BASIC_OPERATOR_SKIP_KIND=1';
  const probe = await detectEngine();
  return probe.engine ? undefined : `${probe.reason}; see docs/local-cluster.md`;
}

// One plain closing line, whatever the reporters above printed.
const total = (key: 'passed' | 'failed' | 'skipped') => runs.reduce((sum, r) => sum + r[key], 0);
process.stdout.write(
  `\ntests: ${total('passed')} passed, ${total('failed')} failed, ${total('skipped')} skipped\n`,
);
process.exit(runs.every((r) => r.status === 0) ? 0 : 1);
