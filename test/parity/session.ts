import type { KubeClient } from '../../src/runtime/client/kube-client.ts';
import { testClient } from '../support/cluster.ts';
import { installCrds } from '../support/crds.ts';
import { createNamespace, deleteNamespace } from '../support/namespace.ts';
import { generate } from './generator.ts';
import type { OpKind } from './model.ts';
import { inProcessOperator, type ParityOperator, processOperator } from './operator.ts';
import { formatDivergence, type RunOptions, runSeed, type SeedResult } from './runner.ts';

export interface SessionOptions {
  seeds: readonly number[];
  steps: number;
  kinds: ReadonlySet<OpKind>;
  /** How the kinds were given on the command line, for the reproduce line ("" = all). */
  kindsArg: string;
  skip?: readonly string[];
  stepTimeoutMs?: number;
  /** Go on with the next seed after a divergence (default true). */
  keepGoing?: boolean;
  log?: (line: string) => void;
}

export interface SessionReport {
  results: SeedResult[];
  cleanSeeds: number;
  cleanSteps: number;
  reports: string[];
  durationMs: number;
}

/** The command that replays one seed up to its diverging step. */
export function reproduceCommand(result: SeedResult, options: SessionOptions): string {
  const steps = result.divergence ? result.divergence.step : result.ops.length - 1;
  const cluster = process.env.BASIC_OPERATOR_CLUSTER
    ? `BASIC_OPERATOR_CLUSTER=${process.env.BASIC_OPERATOR_CLUSTER} `
    : '';
  const kinds = options.kindsArg ? ` --kinds=${options.kindsArg}` : '';
  const skip = options.skip?.length ? ` --skip ${options.skip.join(',')}` : '';
  return `${cluster}npm run parity -- --seed ${result.seed} --steps ${steps}${kinds}${skip}`;
}

/**
 * Everything a parity run needs: the CRDs, a fresh namespace, the operator watching only that
 * namespace (in this process, its metrics registry read directly; or, when restartOperator is among
 * the kinds, src/main.ts in a child process the harness can SIGKILL, its /metrics scraped), then the
 * seeds one after another (so each seed's reconcile rates are its own).
 */
export async function runSession(options: SessionOptions): Promise<SessionReport> {
  const started = Date.now();
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  await installCrds();
  const client: KubeClient = await testClient();
  const namespace = await createNamespace(client, 'parity');
  let operator: ParityOperator | undefined;
  const results: SeedResult[] = [];
  const reports: string[] = [];
  try {
    operator = options.kinds.has('restartOperator')
      ? await processOperator(namespace)
      : await inProcessOperator(namespace);
    const runOptions: RunOptions = {
      client,
      namespace,
      operator,
      skip: options.skip,
      log,
      ...(options.stepTimeoutMs ? { stepTimeoutMs: options.stepTimeoutMs } : {}),
    };
    for (const seed of options.seeds) {
      const ops = generate(seed, { steps: options.steps, kinds: options.kinds });
      const result = await runSeed(seed, ops, runOptions);
      results.push(result);
      if (result.divergence) {
        const report = formatDivergence(result, reproduceCommand(result, options));
        reports.push(report);
        log(report);
        if (options.keepGoing === false) break;
      } else {
        log(`seed ${seed}: ${result.cleanSteps} steps clean in ${(result.durationMs / 1000).toFixed(1)}s`);
      }
    }
  } finally {
    await operator?.stop();
    await deleteNamespace(client, namespace);
  }
  return {
    results,
    cleanSeeds: results.filter((r) => !r.divergence).length,
    cleanSteps: results.reduce((sum, r) => sum + r.cleanSteps, 0),
    reports,
    durationMs: Date.now() - started,
  };
}

export function summaryLine(report: SessionReport): string {
  const seeds = report.results.length;
  const steps = report.results.reduce((sum, r) => sum + r.ops.length, 0);
  return (
    `parity: ${report.cleanSeeds}/${seeds} seeds clean, ${report.cleanSteps}/${steps} steps clean, ` +
    `${report.reports.length} divergence(s), ${(report.durationMs / 1000).toFixed(1)}s`
  );
}
