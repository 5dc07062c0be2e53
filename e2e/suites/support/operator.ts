import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { V1Container, V1Deployment, V1EnvVar, V1Pod, V1Probe } from '@kubernetes/client-node';
import { type RunResult, run, runOk } from '../../providers/exec.ts';
import { IMAGE as KIND_IMAGE } from '../../providers/kind/index.ts';
import type { ClusterInfo } from '../../providers/provider.ts';
import { buildDist } from '../../support/build-dist.ts';
import { httpGet } from '../../support/http.ts';
import { type Exit, freePort, OperatorProcess } from '../../support/operator-process.ts';
import { MetricsReader, metricsSecure, scrapeLocalPort, withPortForward } from './metrics-scrape.ts';
import { REPO_ROOT } from './release.ts';
import { serviceAccountKubeconfig } from './service-account-kubeconfig.ts';

/**
 * The operator of an installed release, as the end-to-end suites see it: on kind it is the chart's
 * Deployment running the image; on the local provider (kwok nodes run no code) it is the image's
 * command run as a local process with the chart's environment and the chart's ServiceAccount.
 */
export interface OperatorUnderTest {
  /** "in-cluster" or "local process". */
  readonly where: string;
  /** Chart values this way of running needs (the image on kind). */
  readonly values: Record<string, unknown>;
  /** Runs the operator of the freshly installed release, given its rendered Deployment. */
  start(deployment: V1Deployment): Promise<void>;
  /** After `helm upgrade`: replaces the running operator by one of the new Deployment. */
  rollTo(deployment: V1Deployment): Promise<void>;
  /** GET of the readiness probe (/readyz) of every operator instance. */
  readyz(): Promise<{ ok: boolean; detail: string }>;
  /** GET /metrics of every operator instance (running, not being deleted): the response bodies. */
  metrics(): Promise<string[]>;
  /** Stops the operator (local) or stops collecting (in-cluster) and returns every log line it wrote. */
  stop(): Promise<string[]>;
  /** Every log line written so far. */
  logLines(): string[];
  /** The last log lines and the process state, for failure messages. */
  describe(): string;
}

export function operatorFor(cluster: ClusterInfo, workdir: string): OperatorUnderTest {
  return cluster.provider === 'kind' ? new InClusterOperator(cluster) : new LocalOperator(cluster, workdir);
}

// ---------------------------------------------------------------------------------------------------
// What the image runs

export interface ImageConfig {
  entrypoint: string[];
  cmd: string[];
  env: Record<string, string>;
}

/** ENTRYPOINT, CMD and ENV of the Dockerfile's final stage (exec form only, as ours uses). */
export function imageConfig(dockerfile: string): ImageConfig {
  const lines = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim());
  const lastFrom = lines.findLastIndex((l) => /^FROM\s/i.test(l));
  const config: ImageConfig = { entrypoint: [], cmd: [], env: {} };
  for (const line of lines.slice(lastFrom + 1)) {
    const [, instruction = '', rest = ''] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
    const upper = instruction.toUpperCase();
    if (upper === 'ENTRYPOINT' || upper === 'CMD') {
      config[upper === 'CMD' ? 'cmd' : 'entrypoint'] = execForm(upper, rest);
    } else if (upper === 'ENV' && !rest.includes('=')) {
      const [key = '', ...value] = rest.split(/\s+/); // the legacy `ENV KEY value` form
      config.env[key] = value.join(' ');
    } else if (upper === 'ENV') {
      for (const [, key = '', value = ''] of rest.matchAll(/(\w+)=("[^"]*"|\S*)/g)) {
        config.env[key] = value.replace(/^"|"$/g, '');
      }
    }
  }
  if (config.entrypoint.length === 0) throw new Error('the Dockerfile has no ENTRYPOINT');
  return config;
}

function execForm(instruction: string, value: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || !parsed.every((p) => typeof p === 'string')) {
    throw new Error(`the Dockerfile's ${instruction} is not in exec form (a JSON array): ${value}`);
  }
  return parsed;
}

/** The container's command line as the kubelet builds it from the image and the pod spec. */
export function commandLine(image: ImageConfig, container: V1Container): string[] {
  const command = container.command ?? image.entrypoint;
  const args = container.args ?? (container.command ? [] : image.cmd);
  return [...command, ...args];
}

/** The operator's container: the pod's default container, else the first. */
export function managerContainer(deployment: V1Deployment): V1Container {
  const template = deployment.spec?.template;
  const wanted = template?.metadata?.annotations?.['kubectl.kubernetes.io/default-container'];
  const containers = template?.spec?.containers ?? [];
  const container = containers.find((c) => c.name === wanted) ?? containers[0];
  if (!container) throw new Error(`deployment ${deployment.metadata?.name} has no container`);
  return container;
}

/** The container's env with downward-API fields filled in by the caller. */
export function resolveEnv(env: V1EnvVar[], fields: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const variable of env) {
    const fieldPath = variable.valueFrom?.fieldRef?.fieldPath;
    if (variable.valueFrom && !fieldPath) {
      throw new Error(`env ${variable.name}: only fieldRef can be resolved outside a pod`);
    }
    const value = fieldPath ? fields[fieldPath] : (variable.value ?? '');
    if (value === undefined) throw new Error(`env ${variable.name}: no local value for ${fieldPath}`);
    out[variable.name] = value;
  }
  return out;
}

/** The readiness probe's path and port number (resolving a named port). */
function readinessEndpoint(container: V1Container): { path: string; port: number } {
  const probe: V1Probe | undefined = container.readinessProbe;
  const port = probe?.httpGet?.port;
  const number =
    typeof port === 'number' ? port : container.ports?.find((p) => p.name === port)?.containerPort;
  if (!probe?.httpGet || number === undefined) {
    throw new Error(`container ${container.name} has no HTTP readiness probe on a known port`);
  }
  return { path: probe.httpGet.path ?? '/', port: number };
}

/** The container port the manager serves /metrics on (BASIC_OPERATOR_METRICS_BIND_ADDRESS). */
function metricsContainerPort(container: V1Container): number {
  const address = container.env?.find((e) => e.name === 'BASIC_OPERATOR_METRICS_BIND_ADDRESS')?.value;
  const port = Number(address?.slice(address.lastIndexOf(':') + 1));
  if (!address || address === '0' || !Number.isInteger(port)) {
    throw new Error(`container ${container.name} serves no metrics (${address})`);
  }
  return port;
}

function tail(lines: readonly string[], count = 25): string {
  return lines.slice(-count).join('\n');
}

// ---------------------------------------------------------------------------------------------------
// Local provider: the image's command as a local process

let built: Promise<void> | undefined;

/** `npm run build` (tsc -> dist/), what the Dockerfile's build stage runs, when src/ changed (buildDist). */
export function buildOperator(): Promise<void> {
  built ??= buildDist().then(() => undefined);
  return built;
}

/**
 * Runs exactly what the image runs (the Dockerfile's ENTRYPOINT/CMD on dist/, with its ENV) with the
 * environment of the rendered Deployment, authenticated as the chart's ServiceAccount through a
 * token, so the chart's RBAC is what the operator gets. Only the listen addresses differ: free
 * loopback ports instead of the chart's (:8443 and :8081). /metrics is read as Prometheus reads it
 * (metrics-scrape.ts).
 */
export class LocalOperator implements OperatorUnderTest {
  readonly where = 'local process';
  readonly values = {};
  private readonly cluster: ClusterInfo;
  private readonly workdir: string;
  /** One process per start() or rollTo(), the last one current. */
  private readonly processes: OperatorProcess[] = [];
  private readiness = { port: 0, path: '/' };
  /** The local port of the current process's /metrics (0: it serves none). */
  private metricsPort = 0;
  private deployment: V1Deployment | undefined;
  private readonly metricsReader: MetricsReader;

  constructor(cluster: ClusterInfo, workdir: string) {
    this.cluster = cluster;
    this.workdir = workdir;
    this.metricsReader = new MetricsReader(cluster);
  }

  /** How each process ended, in order. */
  get exits(): Exit[] {
    return this.processes.flatMap((p) => (p.exit ? [p.exit] : []));
  }

  async start(deployment: V1Deployment): Promise<void> {
    await buildOperator();
    await this.writeKubeconfig(deployment);
    await this.spawn(deployment);
  }

  async rollTo(deployment: V1Deployment): Promise<void> {
    await this.current?.stop();
    await this.spawn(deployment);
  }

  async readyz(): Promise<{ ok: boolean; detail: string }> {
    if (!this.current?.running) return { ok: false, detail: 'the operator process is not running' };
    try {
      const { status, body } = await httpGet(this.readiness.port, this.readiness.path);
      return { ok: status === 200, detail: `${status} ${body.trim()}` };
    } catch (err) {
      return { ok: false, detail: err instanceof Error ? err.message : String(err) };
    }
  }

  async metrics(): Promise<string[]> {
    if (!this.current?.running) return [];
    if (this.metricsPort === 0 || !this.deployment) throw new Error('the operator process serves no metrics');
    const token = metricsSecure(managerContainer(this.deployment))
      ? await this.metricsReader.tokenFor(this.deployment)
      : undefined;
    return [await scrapeLocalPort(this.metricsPort, token)];
  }

  async stop(): Promise<string[]> {
    await this.current?.stop();
    return this.logLines();
  }

  logLines(): string[] {
    return this.processes.flatMap((p) => p.lines);
  }

  describe(): string {
    return this.current?.describe(25) ?? `--- operator (${this.where}): not started`;
  }

  private get current(): OperatorProcess | undefined {
    return this.processes.at(-1);
  }

  private kubectl(args: string[]): Promise<string> {
    return runOk(this.cluster.kubectl, ['--kubeconfig', this.cluster.kubeconfig, ...args]);
  }

  /** Server and CA of the test kubeconfig; the user is the ServiceAccount's token. */
  private async writeKubeconfig(deployment: V1Deployment): Promise<void> {
    const namespace = deployment.metadata?.namespace ?? '';
    const serviceAccount = deployment.spec?.template.spec?.serviceAccountName ?? 'default';
    const token = (
      await this.kubectl(['create', 'token', serviceAccount, '-n', namespace, '--duration=1h'])
    ).trim();
    const config = serviceAccountKubeconfig(this.cluster.kubeconfig, serviceAccount, token, namespace);
    writeFileSync(this.kubeconfigPath, config, { mode: 0o600 });
  }

  private get kubeconfigPath(): string {
    return join(this.workdir, 'operator-kubeconfig.json');
  }

  private async spawn(deployment: V1Deployment): Promise<void> {
    this.deployment = deployment;
    const container = managerContainer(deployment);
    const image = imageConfig(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8'));
    const [executable = '', ...args] = commandLine(image, container);
    const namespace = deployment.metadata?.namespace ?? '';
    const env = resolveEnv(container.env ?? [], {
      'metadata.name': `${deployment.metadata?.name}-local-${process.pid}`,
      'metadata.namespace': namespace,
      'spec.serviceAccountName': deployment.spec?.template.spec?.serviceAccountName ?? 'default',
      'spec.nodeName': 'localhost',
      'status.podIP': '127.0.0.1',
    });
    const probe = readinessEndpoint(container);
    const ports = new Map<number, number>(); // container port -> local port
    for (const name of ['BASIC_OPERATOR_METRICS_BIND_ADDRESS', 'BASIC_OPERATOR_HEALTH_PROBE_BIND_ADDRESS']) {
      const address = env[name];
      if (address === undefined || address === '0') continue;
      const containerPort = Number(address.slice(address.lastIndexOf(':') + 1));
      const local = await freePort();
      ports.set(containerPort, local);
      env[name] = `127.0.0.1:${local}`;
      if (name === 'BASIC_OPERATOR_METRICS_BIND_ADDRESS') this.metricsPort = local;
    }
    const localProbePort = ports.get(probe.port);
    if (localProbePort === undefined)
      throw new Error(`the readiness probe's port ${probe.port} is not served`);
    this.readiness = { port: localProbePort, path: probe.path };
    // The image runs its own node; here the pinned Node of this repository runs the same dist/.
    const command = basename(executable) === 'node' ? process.execPath : executable;
    this.processes.push(
      new OperatorProcess({
        name: `local operator process ${this.processes.length + 1}`,
        command,
        args,
        cwd: REPO_ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          ...image.env,
          ...env,
          KUBECONFIG: this.kubeconfigPath,
        },
        logFile: join(this.workdir, 'operator.log'),
      }),
    );
  }
}

// ---------------------------------------------------------------------------------------------------
// kind: the chart's Deployment running the image

const [KIND_REPOSITORY, KIND_TAG] = KIND_IMAGE.split(':');

/**
 * The image `KindProvider.up()` builds and loads into the kind nodes: the operator's, which the
 * backup and restore Jobs run too (the chart's default backup.jobImage).
 */
export function kindImageValues(): Record<string, unknown> {
  return { image: { repository: KIND_REPOSITORY, tag: KIND_TAG, pullPolicy: 'IfNotPresent' } };
}

/**
 * The operator as the chart runs it. Logs are followed from every pod as it appears (so the logs of
 * pods replaced by an upgrade are kept), and read whole from the pods still there at stop().
 */
export class InClusterOperator implements OperatorUnderTest {
  readonly where = 'in-cluster';
  readonly values: Record<string, unknown>;
  private readonly cluster: ClusterInfo;
  private deployment: V1Deployment | undefined;
  private readonly podLogs = new Map<string, string[]>();
  private readonly followers = new Map<string, ChildProcess>();
  private poller: NodeJS.Timeout | undefined;
  private readonly metricsReader: MetricsReader;

  constructor(cluster: ClusterInfo) {
    this.cluster = cluster;
    this.values = kindImageValues();
    this.metricsReader = new MetricsReader(cluster);
  }

  private kubectl(args: string[]): Promise<RunResult> {
    return run(this.cluster.kubectl, ['--kubeconfig', this.cluster.kubeconfig, ...args], {
      timeoutMs: 240_000,
    });
  }

  private get namespace(): string {
    return this.deployment?.metadata?.namespace ?? '';
  }

  async start(deployment: V1Deployment): Promise<void> {
    await this.rollTo(deployment);
    this.poller = setInterval(() => void this.followNewPods(), 2000).unref();
    await this.followNewPods();
  }

  async rollTo(deployment: V1Deployment): Promise<void> {
    this.deployment = deployment;
    const name = deployment.metadata?.name ?? '';
    const result = await this.kubectl([
      'rollout',
      'status',
      `deployment/${name}`,
      '-n',
      this.namespace,
      '--timeout=180s',
    ]);
    if (result.code !== 0)
      throw new Error(`the operator did not roll out:\n${result.stderr}${result.stdout}`);
  }

  private async pods(): Promise<V1Pod[]> {
    if (!this.deployment) return [];
    const labels = this.deployment.spec?.selector.matchLabels ?? {};
    const selector = Object.entries(labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const result = await this.kubectl(['get', 'pods', '-n', this.namespace, '-l', selector, '-o', 'json']);
    if (result.code !== 0) return [];
    return (JSON.parse(result.stdout) as { items: V1Pod[] }).items;
  }

  private containerName(): string {
    return this.deployment ? managerContainer(this.deployment).name : 'manager';
  }

  private async followNewPods(): Promise<void> {
    for (const pod of await this.pods()) {
      const name = pod.metadata?.name ?? '';
      const started = pod.status?.containerStatuses?.some(
        (c) => c.name === this.containerName() && c.started,
      );
      if (!started || this.followers.has(name)) continue;
      const lines: string[] = [];
      this.podLogs.set(name, lines);
      const child = spawn(
        this.cluster.kubectl,
        [
          '--kubeconfig',
          this.cluster.kubeconfig,
          'logs',
          '-f',
          name,
          '-c',
          this.containerName(),
          '-n',
          this.namespace,
        ],
        { stdio: ['ignore', 'pipe', 'ignore'] },
      );
      createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
      this.followers.set(name, child);
    }
  }

  async readyz(): Promise<{ ok: boolean; detail: string }> {
    if (!this.deployment) return { ok: false, detail: 'not started' };
    const { path, port } = readinessEndpoint(managerContainer(this.deployment));
    const pods = (await this.pods()).filter((p) => !p.metadata?.deletionTimestamp);
    if (pods.length === 0) return { ok: false, detail: 'no operator pod' };
    const answers: string[] = [];
    let ok = true;
    for (const pod of pods) {
      const proxy = `/api/v1/namespaces/${this.namespace}/pods/${pod.metadata?.name}:${port}/proxy${path}`;
      const result = await this.kubectl(['get', '--raw', proxy]);
      ok &&= result.code === 0;
      answers.push(`${pod.metadata?.name}: ${(result.stdout || result.stderr).trim()}`);
    }
    return { ok, detail: answers.join('; ') };
  }

  async metrics(): Promise<string[]> {
    if (!this.deployment) return [];
    const container = managerContainer(this.deployment);
    const port = metricsContainerPort(container);
    // The API server's pod proxy would drop the bearer token (it authenticates with it), so a
    // port-forward carries the scrape, as a scraper inside the cluster would send it.
    const token = metricsSecure(container) ? await this.metricsReader.tokenFor(this.deployment) : undefined;
    const pods = (await this.pods()).filter((p) => !p.metadata?.deletionTimestamp);
    const bodies: string[] = [];
    for (const pod of pods) {
      const name = pod.metadata?.name ?? '';
      bodies.push(
        await withPortForward(this.cluster, this.namespace, name, port, (local) =>
          scrapeLocalPort(local, token),
        ),
      );
    }
    return bodies;
  }

  async stop(): Promise<string[]> {
    clearInterval(this.poller);
    // The pods still running: their whole log, and the previous container's after a restart.
    for (const pod of await this.pods()) {
      const name = pod.metadata?.name ?? '';
      const args = ['logs', name, '-c', this.containerName(), '-n', this.namespace];
      const current = await this.kubectl(args);
      const restarted = pod.status?.containerStatuses?.some((c) => c.restartCount > 0);
      const previous = restarted ? await this.kubectl([...args, '--previous']) : undefined;
      if (current.code === 0) {
        this.podLogs.set(
          name,
          [...(previous?.stdout ?? '').split('\n'), ...current.stdout.split('\n')].filter(Boolean),
        );
      }
    }
    for (const child of this.followers.values()) child.kill('SIGTERM');
    this.followers.clear();
    return this.logLines();
  }

  logLines(): string[] {
    return [...this.podLogs.values()].flat();
  }

  describe(): string {
    const sections = [...this.podLogs.entries()].map(([pod, lines]) => `--- ${pod}:\n${tail(lines, 15)}`);
    return `--- operator (${this.where}):\n${sections.join('\n')}`;
  }
}
