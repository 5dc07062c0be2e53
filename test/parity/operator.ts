import { fileURLToPath } from 'node:url';
import type { ClusterInfo } from '../../e2e/providers/provider.ts';
import { testCluster } from '../../e2e/support/cluster.ts';
import { httpGet } from '../../e2e/support/http.ts';
import { freePort, OperatorProcess } from '../../e2e/support/operator-process.ts';
import { find, parseMetrics } from '../../e2e/support/prometheus-text.ts';
import { registerControllers } from '../../src/controllers/index.ts';
import type { Manager } from '../../src/runtime/manager/manager.ts';
import { startTestManager } from '../support/manager.ts';
import { OPERATOR_DEFAULTS } from '../support/operator-options.ts';
import { reconcileCounts } from './reconcile-rate.ts';

/** The operator under test, as the harness drives it. */
export interface ParityOperator {
  /** controller_runtime_reconcile_total per controller, or undefined while it cannot be read. */
  reconcileCounts(): Promise<Map<string, number> | undefined>;
  /** SIGKILL and start again (only an operator in a process of its own can). */
  restart?: () => Promise<string>;
  stop(): Promise<void>;
}

/** The operator in this process: a manager watching only `namespace`. */
export async function inProcessOperator(namespace: string): Promise<ParityOperator> {
  const manager: Manager = await startTestManager([namespace], (m) =>
    registerControllers(m, OPERATOR_DEFAULTS),
  );
  return {
    reconcileCounts: () => reconcileCounts(manager.registry),
    stop: () => manager.stop(),
  };
}

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/**
 * The operator as src/main.ts in a child process (no leader election, its default), so the harness
 * can SIGKILL it as a crash or an evicted pod would and start another. Its reconcile counts come from
 * its /metrics endpoint (plain HTTP, on a free port chosen for each incarnation).
 */
export async function processOperator(namespace: string, cluster?: ClusterInfo): Promise<ParityOperator> {
  const { kubeconfig } = cluster ?? (await testCluster());
  let port = 0;
  let generation = 0;
  const start = async (): Promise<OperatorProcess> => {
    generation++;
    // A port of its own each time: the one a killed incarnation freed may be taken by then (another
    // test file or parity session runs beside this one).
    port = await freePort();
    const operator = new OperatorProcess({
      name: `parity-operator-${generation}`,
      args: [
        MAIN,
        '--kubeconfig',
        kubeconfig,
        '--namespaces',
        namespace,
        '--metrics-secure=false',
        '--metrics-bind-address',
        `127.0.0.1:${port}`,
        '--health-probe-bind-address',
        '0',
        '--log-level',
        'info',
      ],
    });
    try {
      await operator.controllersStarted(120_000);
    } catch (err) {
      await operator.stop({ signal: 'SIGKILL' });
      throw err;
    }
    // Only what a failure message needs: a long run would otherwise keep every line.
    operator.lines.length = 0;
    operator.logs.length = 0;
    return operator;
  };
  let current = await start();
  return {
    async reconcileCounts() {
      try {
        const { status, body } = await httpGet(port, '/metrics');
        if (status !== 200) return undefined;
        const counts = new Map<string, number>();
        for (const s of find(parseMetrics(body), 'controller_runtime_reconcile_total')) {
          const controller = s.labels.controller ?? '';
          counts.set(controller, (counts.get(controller) ?? 0) + s.value);
        }
        return counts;
      } catch {
        return undefined;
      }
    },
    async restart() {
      const started = Date.now();
      const exit = await current.stop({ signal: 'SIGKILL' });
      if (exit.signal !== 'SIGKILL') {
        throw new Error(`the operator had already exited (${JSON.stringify(exit)})\n${current.describe()}`);
      }
      current = await start();
      return `operator killed and running again after ${((Date.now() - started) / 1000).toFixed(1)}s`;
    },
    async stop() {
      await current.stop({ signal: 'SIGTERM', graceMs: 10_000 });
    },
  };
}
