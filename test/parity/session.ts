import { KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { restartComponent } from '../../e2e/providers/local/components.ts';
import type { ClusterInfo } from '../../e2e/providers/provider.ts';
import { testCluster } from '../../e2e/support/cluster.ts';
import { installCrdsInto } from '../../e2e/support/crds.ts';
import { createNamespace, deleteNamespace } from '../../e2e/support/namespace.ts';
import { KubeClient } from '../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../src/runtime/client/resource.ts';
import { generate } from './generator.ts';
import type { OpKind } from './model.ts';
import { inProcessOperator, type ParityOperator, processOperator } from './operator.ts';
import { formatDivergence, type RunOptions, runSeed, type SeedResult } from './runner.ts';

/** The local cluster a session with kube-controller-manager restarts brings up for itself. */
export const PARITY_CLUSTER = 'basic-operator-parity';

export interface SessionOptions {
  seeds: readonly number[];
  steps: number;
  kinds: ReadonlySet<OpKind>;
  /** How the kinds were given on the command line, for the reproduce line ("" = all). */
  kindsArg: string;
  skip?: readonly string[];
  stepTimeoutMs?: number;
  /**
   * A local cluster the session has to itself: restartOperator then kills kube-controller-manager
   * on its side too (see docs/parity.md), and the operator always runs in a child process. Default:
   * the test cluster, where kube-controller-manager keeps running.
   */
  ownCluster?: ClusterInfo;
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
  const cluster =
    process.env.BASIC_OPERATOR_CLUSTER && !options.ownCluster
      ? `BASIC_OPERATOR_CLUSTER=${process.env.BASIC_OPERATOR_CLUSTER} `
      : options.ownCluster && options.ownCluster.name !== PARITY_CLUSTER
        ? `BASIC_OPERATOR_CLUSTER=${options.ownCluster.name} `
        : '';
  const kinds = options.kindsArg ? ` --kinds=${options.kindsArg}` : '';
  const restartKcm = options.ownCluster ? ' --restart-kcm' : '';
  const skip = options.skip?.length ? ` --skip ${options.skip.join(',')}` : '';
  return `${cluster}npm run parity -- --seed ${result.seed} --steps ${steps}${kinds}${skip}${restartKcm}`;
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
  const cluster = options.ownCluster ?? (await testCluster());
  await installCrdsInto(cluster);
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  const client = new KubeClient(kc, { userAgent: 'basic-operator-tests' });
  const namespace = await createNamespace(client, 'parity');
  let operator: ParityOperator | undefined;
  const results: SeedResult[] = [];
  const reports: string[] = [];
  try {
    operator =
      options.kinds.has('restartOperator') || options.ownCluster
        ? await processOperator(namespace, cluster)
        : await inProcessOperator(namespace);
    const runOptions: RunOptions = {
      client,
      namespace,
      operator,
      skip: options.skip,
      log,
      ...(options.ownCluster ? { restartKcm: () => restartKcm(client, cluster.name) } : {}),
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

/**
 * SIGKILLs kube-controller-manager and returns once a new incarnation holds its leader lease: until
 * then its side only looks settled (nothing moves because nothing runs), which the harness would
 * compare as if kube-controller-manager had finished the step.
 */
async function restartKcm(client: KubeClient, cluster: string): Promise<string> {
  const started = Date.now();
  const holder = async () =>
    (await client.get<V1Lease>(CoreTypes.Lease, 'kube-system', 'kube-controller-manager'))?.spec
      ?.holderIdentity;
  const before = await holder();
  await restartComponent(cluster, 'kube-controller-manager');
  const restarted = Date.now();
  const deadline = restarted + 120_000;
  for (;;) {
    const now = await holder();
    if (now && now !== before) break;
    if (Date.now() > deadline) {
      throw new Error(`kube-controller-manager did not take its lease again within 120 s (holder ${now})`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const s = (ms: number) => (ms / 1000).toFixed(1);
  return `kube-controller-manager killed, running again after ${s(restarted - started)}s and leading after ${s(Date.now() - started)}s`;
}
