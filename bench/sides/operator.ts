import { imageNodeFlags } from '../../e2e/support/image-node-flags.ts';
import { freePort, type LogLine, OperatorProcess } from '../../e2e/support/operator-process.ts';
import { BASIC_DEPLOYMENT, BASIC_REPLICA_SET, type BasicDeployment } from '../../src/apis/index.ts';
import type { MeasuredCluster } from '../cluster.ts';
import { log } from '../log.ts';
import { heapAfterGc } from '../measure/inspector.ts';
import type { MemoryCgroup } from '../measure/memory-cgroup.ts';
import { operatorStartup } from '../measure/startup.ts';
import { SideTrace } from '../trace.ts';
import { type BenchSide, deploymentSpec, type SideController } from './side.ts';

/** How the operator runs: its flags as the chart sets them, and the Node process the image starts. */
export interface OperatorSettings {
  /** Its client budget, shared by all its controllers, and its workers per controller. */
  readonly qps: number;
  readonly burst: number;
  readonly workers: number;
  /** Start Node with the image's flags (from the Dockerfile), then these. */
  readonly imageNodeFlags: boolean;
  readonly nodeFlags: string;
  /** A directory for a V8 CPU profile of the operator. */
  readonly profileDir: string | undefined;
  /** A file for a heap snapshot taken with its live heap. */
  readonly heapSnapshot: string | undefined;
  /** The memory limit it runs in (a cgroup, as its pod runs), in bytes. */
  readonly memoryLimit: number | undefined;
  readonly cgroup: MemoryCgroup | undefined;
}

/** BasicDeployments handled by the operator, run as its image and chart run it. */
export function operatorSide(
  cluster: MeasuredCluster,
  replicas: number,
  settings: OperatorSettings,
): BenchSide<BasicDeployment> {
  const namespace = 'bench-op';
  return {
    name: 'basic-operator',
    title: 'BasicDeployments with basic-operator',
    namespace,
    deployments: BASIC_DEPLOYMENT,
    sets: BASIC_REPLICA_SET,
    deployment: (i) => ({
      apiVersion: BASIC_DEPLOYMENT.apiVersion,
      kind: BASIC_DEPLOYMENT.kind,
      metadata: { name: `d-${i}`, namespace },
      spec: deploymentSpec(i, replicas),
    }),
    isReady: (d) => d.status?.ready === true && d.status.observedGeneration === d.metadata.generation,
    work: {
      reconcileSeries: 'controller_runtime_reconcile_total',
      controllers: ['basicdeployment', 'basicreplicaset'],
    },
    ownProcess: 'operator',
    start: () => startedOperator(cluster, namespace, settings),
  };
}

/** The operator started in `namespace` and ready (its caches synced). */
async function startedOperator(
  cluster: MeasuredCluster,
  ns: string,
  settings: OperatorSettings,
): Promise<SideController> {
  const ports = { metrics: await freePort(), health: await freePort(), inspector: await freePort() };
  const metricsUrl = `http://127.0.0.1:${ports.metrics}/metrics`;
  const { memoryLimit, cgroup } = settings;
  const watch = { namespaces: [ns], leaseNamespace: ns, echo: process.stderr };
  let operator = startOperator(cluster, watch, ports, settings);
  try {
    await operator.waitForHttp('ready, its caches synced', ports.health, '/readyz', 120_000);
  } catch (err) {
    await operator.stop({ graceMs: 30_000 });
    throw err;
  }
  // The process the side measures; `operator` becomes the restarted one.
  const current = operator;
  return {
    pid: operator.child.pid!,
    memoryLimitMiB: memoryLimit === undefined ? undefined : memoryLimit / 1048576,
    stats: () => current.stats(),
    metrics: async () => (await fetch(metricsUrl)).text(),
    exited: () =>
      current.exited.then((exit) => {
        const oom = exit.signal === 'SIGKILL' && cgroup && cgroup.failures() > 0;
        throw new Error(
          `the operator exited (${exit.signal ?? exit.code})${oom ? `: killed at its ${memoryLimit! / 1048576} MiB memory limit` : ''}\n${current.describe()}`,
        );
      }),
    trace: () =>
      new SideTrace({
        metricsUrl,
        cpuTicks: () => cluster.controlPlaneTicks().set('operator', current.stats().cpuTicks),
      }),
    liveHeap: () => heapAfterGc(current.child.pid!, ports.inspector, settings.heapSnapshot),
    restart: async () => {
      log('  restarting the operator (SIGTERM, then a new process)');
      await operator.stop({ graceMs: 30_000 });
      const startedAt = Date.now();
      operator = startOperator(cluster, watch, ports, settings);
      try {
        return await operatorStartup(startedAt, ports);
      } finally {
        await operator.stop({ graceMs: 30_000 });
      }
    },
    stop: () => operator.stop({ graceMs: 30_000 }),
  };
}

/** What the operator watches, where it holds its lease, and what becomes of its log lines. */
export interface OperatorWatch {
  readonly namespaces: readonly string[];
  readonly leaseNamespace: string;
  /** Every log line is written here as it arrives (the bench: stderr). */
  readonly echo?: NodeJS.WritableStream;
  /** Keep only this many of the last lines in memory (a long run that logs much). */
  readonly retainLines?: number;
  readonly onLine?: (line: LogLine) => void;
}

/**
 * The operator as its image and chart run it: the compiled dist/main.js, with the image's Node flags,
 * inside the chart's memory limit.
 */
export function startOperator(
  cluster: MeasuredCluster,
  watch: OperatorWatch,
  ports: { metrics: number; health: number; inspector: number },
  settings: OperatorSettings,
): OperatorProcess {
  const node = (args: string[]) =>
    settings.cgroup?.wrap(process.execPath, args) ?? { command: process.execPath, args };
  return new OperatorProcess({
    name: 'operator',
    ...node([
      ...(settings.imageNodeFlags ? imageNodeFlags() : []),
      ...settings.nodeFlags.split(' ').filter(Boolean),
      `--inspect-port=127.0.0.1:${ports.inspector}`,
      ...(settings.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.profileDir}`] : []),
      'dist/main.js',
      '--kubeconfig',
      cluster.info.kubeconfig,
      '--namespaces',
      watch.namespaces.join(','),
      '--kube-api-qps',
      String(settings.qps),
      '--kube-api-burst',
      String(settings.burst),
      '--max-concurrent-reconciles',
      String(settings.workers),
      // As the chart runs it (and kube-controller-manager runs): with a leader lease to renew.
      '--leader-elect',
      '--leader-election-namespace',
      watch.leaseNamespace,
      '--metrics-secure=false',
      '--metrics-bind-address',
      `127.0.0.1:${ports.metrics}`,
      '--health-probe-bind-address',
      `127.0.0.1:${ports.health}`,
      '--log-level',
      'warn',
    ]),
    echo: watch.echo,
    retainLines: watch.retainLines,
    onLine: watch.onLine,
  });
}
