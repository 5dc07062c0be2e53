import { parseArgs } from 'node:util';
import { CLUSTER_NAME } from '../e2e/providers/local/paths.ts';
import { parseKinds } from '../test/parity/generator.ts';
import { OP_KINDS } from '../test/parity/model.ts';
import { withOwnCluster } from '../test/parity/own-cluster.ts';
import { CHECKS } from '../test/parity/runner.ts';
import { PARITY_CLUSTER, runSession, summaryLine } from '../test/parity/session.ts';

/**
 * `npm run parity -- --seeds N [--first F] [--seed S]... [--steps K] [--kinds ...] [--skip ...]`:
 * the differential test against kube-controller-manager with as many seeds as asked (see docs/parity.md).
 */
const USAGE = `usage: npm run parity -- [options]
  --seeds N          run N seeds (from --first, default 1)                  default 5
  --first F          the first seed of --seeds                              default 1
  --seed S           run seed S only (repeatable; overrides --seeds)
  --steps K          operations per seed after the create                   default 8
  --kinds LIST       only these operation kinds ("a,b"; "--kinds=-a,-b": all but these)
  --exclude LIST     all operation kinds but these
                     (${OP_KINDS.join(', ')})
  --skip LIST        checks to skip: ${CHECKS.join(', ')}, or a snapshot path prefix
                     such as conditions.Available
  --step-timeout S   seconds a step may take to settle                      default 60
  --stop-early       stop at the first divergence
  --restart-kcm      restartOperator kills kube-controller-manager on its side too; runs on a local
                     cluster of its own, ${PARITY_CLUSTER} (or BASIC_OPERATOR_CLUSTER when it names
                     another than ${CLUSTER_NAME}), brought up if needed and stopped at the end
Runs against the local cluster named by BASIC_OPERATOR_CLUSTER (brought up if needed), with the
operator in this process, or in a child process it can SIGKILL when restartOperator is among the
kinds. Exit code 1 when any seed diverged.`;

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    process.stderr.write(`--${name} must be a non-negative integer, got "${value}"\n${USAGE}\n`);
    process.exit(2);
  }
  return n;
}

const { values } = parseArgs({
  options: {
    seeds: { type: 'string' },
    first: { type: 'string' },
    seed: { type: 'string', multiple: true },
    steps: { type: 'string' },
    kinds: { type: 'string' },
    exclude: { type: 'string' },
    skip: { type: 'string' },
    'step-timeout': { type: 'string' },
    'stop-early': { type: 'boolean' },
    'restart-kcm': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
  allowPositionals: false,
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

let kinds: ReturnType<typeof parseKinds>;
// One canonical spelling for the reproduce line: "a,b" (only) or "-a,-b" (all but).
const kindsArg = values.exclude
  ? values.exclude
      .split(',')
      .filter(Boolean)
      .map((k) => `-${k.trim().replace(/^-/, '')}`)
      .join(',')
  : (values.kinds ?? '');
try {
  kinds = kindsArg.split(',').every((k) => k && !k.trim().startsWith('-'))
    ? parseKinds(kindsArg, new Set())
    : parseKinds(kindsArg);
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(2);
}
const seeds = values.seed?.length
  ? values.seed.map((s) => positiveInt('seed', s, 1))
  : Array.from(
      { length: positiveInt('seeds', values.seeds, 5) },
      (_, i) => positiveInt('first', values.first, 1) + i,
    );

let ownCluster: string | undefined;
if (values['restart-kcm']) {
  const named = process.env.BASIC_OPERATOR_CLUSTER;
  ownCluster = named && named !== CLUSTER_NAME ? named : PARITY_CLUSTER;
}
const log = (line: string) => process.stdout.write(`${line}\n`);
const options = {
  seeds,
  steps: positiveInt('steps', values.steps, 8),
  kinds,
  kindsArg,
  skip: values.skip ? values.skip.split(',').filter(Boolean) : [],
  stepTimeoutMs: positiveInt('step-timeout', values['step-timeout'], 60) * 1000,
  keepGoing: !values['stop-early'],
  log,
};
const report = ownCluster
  ? await withOwnCluster(ownCluster, (cluster) => runSession({ ...options, ownCluster: cluster }), log)
  : await runSession(options);
process.stdout.write(`\n${summaryLine(report)}\n`);
process.exit(report.reports.length ? 1 : 0);
