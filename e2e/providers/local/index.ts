import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run, runOk } from '../exec.ts';
import {
  NODE_COUNT,
  nodesManifest,
  PODS_PER_NODE,
  storageClassManifest,
  volumesManifest,
} from '../fixtures.ts';
import type { ClusterInfo, ClusterProvider } from '../provider.ts';
import { AUDIT_LOG_BACKUPS, AUDIT_LOG_MAX_MB, AUDIT_POLICY } from './audit.ts';
import {
  COMPONENTS,
  type Component,
  heldComponents,
  startStoppedComponents,
  stopAllComponents,
  stoppedComponents,
} from './components.ts';
import { kwokStagesYaml } from './kwok-stages.ts';
import { withFileLock } from './lock.ts';
import { CLUSTER_NAME, clusterDir, kwokWorkdir, localKubeconfig } from './paths.ts';
import { clusterPorts, takenPorts } from './ports.ts';
import { componentLogEnd, whyExited } from './supervisor.ts';
import { ensureToolchain, type Toolchain, toolchainPaths, toolchainStamps } from './toolchain.ts';

/**
 * kube-controller-manager's client budget and its --concurrent-deployment-syncs and
 * --concurrent-replicaset-syncs (the operator's default worker count); the benchmark reads them from
 * the running process and gives the operator the same.
 */
const KCM_QPS = 100;
const KCM_BURST = 150;
const KCM_WORKERS = 20;
/**
 * Pods kwok-controller moves through their stages (Running, Ready) at once; its default of 4 made
 * kwok, not the controllers, set the time until 1000 pods are Ready (it lagged creation by 5 s).
 */
const KWOK_POD_PARALLELISM = 32;
/** The scheduler must not be the bottleneck of either side of the benchmark. */
const SCHEDULER_QPS = 1000;
const SCHEDULER_BURST = 2000;
const NODE_LEASE_SECONDS = 20;

/** The identity the running kwok-controller holds node leases under: the `id` of its latest log line. */
function kwokIdentity(cluster: string): string | undefined {
  const end = componentLogEnd(cluster, 'kwok-controller', 16_384) ?? '';
  return [...end.matchAll(/"id":"([^"]+)"/g)].at(-1)?.[1];
}

function say(message: string): void {
  process.stderr.write(`[cluster:local] ${message}\n`);
}

/** Serializes one cluster's set-up across processes (test files may call up() at the same time). */
function withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
  return withFileLock(join(kwokWorkdir(), `${name}.lock`), 10 * 60_000, fn);
}

/**
 * A real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) built from
 * upstream sources, with kwok simulating the nodes, run as local processes by `kwokctl --runtime binary`.
 * `cluster` names it: tests that kill control-plane components get a cluster of their own.
 */
/** Free volumes kept beyond what a test file asks for (ensureVolumes). */
const VOLUME_RESERVE = 40;

export class LocalProvider implements ClusterProvider {
  readonly name = 'local' as const;
  readonly cluster: string;
  private tools: Toolchain = toolchainPaths();
  /** The last start of components that exited while `up` waited (startIfExited). */
  private starting: Promise<void> = Promise.resolve();

  constructor(cluster = CLUSTER_NAME) {
    this.cluster = cluster;
  }

  private kwokctl(args: string[], inherit = false) {
    return run(this.tools.kwokctl, ['--name', this.cluster, ...args], {
      env: { KWOK_WORKDIR: kwokWorkdir() },
      inherit,
    });
  }

  private kubectl(args: string[], input?: string) {
    return runOk(this.tools.kubectl, ['--kubeconfig', localKubeconfig(this.cluster), ...args], { input });
  }

  private exists(): boolean {
    return existsSync(join(clusterDir(this.cluster), 'kwok.yaml'));
  }

  private async serverVersion(): Promise<string | undefined> {
    const kubeconfig = localKubeconfig(this.cluster);
    if (!existsSync(kubeconfig) || !existsSync(this.tools.kubectl)) return undefined;
    const result = await run(this.tools.kubectl, [
      '--kubeconfig',
      kubeconfig,
      'version',
      '-o',
      'json',
      '--request-timeout=5s',
    ]);
    if (result.code !== 0) return undefined;
    try {
      return (JSON.parse(result.stdout) as { serverVersion?: { gitVersion?: string } }).serverVersion
        ?.gitVersion;
    } catch {
      return undefined;
    }
  }

  private info(serverVersion: string): ClusterInfo {
    return {
      provider: 'local',
      name: this.cluster,
      kubeconfig: localKubeconfig(this.cluster),
      kubectl: this.tools.kubectl,
      helm: this.tools.helm,
      serverVersion,
    };
  }

  async status(): Promise<ClusterInfo | undefined> {
    const version = await this.serverVersion();
    return version ? this.info(version) : undefined;
  }

  async up(): Promise<ClusterInfo> {
    const started = Date.now();
    this.tools = await ensureToolchain();
    const version = await withLock(this.cluster, async () => {
      const argsFile = join(clusterDir(this.cluster), 'basic-operator-args.json');
      const args = this.createArgs();
      // A rebuilt binary (new version or source patch) changes the stamps, and recreates the cluster.
      const wanted = JSON.stringify({
        args,
        config: readFileSync(this.configFile(), 'utf8'),
        auditPolicy: AUDIT_POLICY,
        binaries: toolchainStamps(),
      });
      if (this.exists() && (!existsSync(argsFile) || readFileSync(argsFile, 'utf8') !== wanted)) {
        say(`cluster ${this.cluster} was created with other settings; recreating it`);
        await this.kwokctl(['delete', 'cluster', '--kubeconfig', localKubeconfig(this.cluster)]);
      } else if (this.exists() && stoppedComponents(this.cluster).length === COMPONENTS.length) {
        // kwokctl picks free ports at creation: another cluster created while this one was stopped
        // may hold them now, and a restart would fail with "address already in use".
        const taken = await takenPorts(clusterPorts(join(clusterDir(this.cluster), 'kwok.yaml')));
        if (taken.length > 0) {
          say(
            `ports ${taken.join(', ')} of stopped cluster ${this.cluster} are in use by another program; recreating it`,
          );
          await this.kwokctl(['delete', 'cluster', '--kubeconfig', localKubeconfig(this.cluster)]);
        }
      }
      let leadersStarted = 0;
      if (!this.exists()) {
        await this.create();
        writeFileSync(argsFile, wanted);
      } else if (stoppedComponents(this.cluster).length > 0) {
        const stopped = stoppedComponents(this.cluster);
        say(`starting stopped components: ${stopped.join(', ')}`);
        if (stopped.includes('kube-controller-manager') || stopped.includes('kube-scheduler')) {
          leadersStarted = Date.now();
        }
        await startStoppedComponents(this.cluster);
      }
      const v = await this.waitForServer();
      await this.applyFixtures();
      await Promise.all([this.waitForNodeLeases(), this.waitForLeaders(leadersStarted)]);
      return v;
    });
    say(
      `cluster ${this.cluster} is up (${version}) in ${((Date.now() - started) / 1000).toFixed(1)}s; KUBECONFIG=${localKubeconfig(this.cluster)}`,
    );
    return this.info(version);
  }

  /**
   * Component flags and kwok's Stages as a kwokctl configuration file (several --extra-args for more
   * than one component make kwokctl v0.8.0 panic). Its content is part of what up() compares, so a
   * changed file recreates the cluster.
   */
  private configFile(): string {
    // One file per cluster: checkouts with other settings may bring their own clusters up meanwhile.
    const file = join(kwokWorkdir(), `basic-operator-kwokctl-${this.cluster}.yaml`);
    // kwokctl copies the policy into the cluster's directory and logs to logs/audit.log there.
    const auditPolicy = join(kwokWorkdir(), `basic-operator-audit-policy-${this.cluster}.yaml`);
    const patch = (name: string, args: Record<string, number | boolean>) =>
      `- name: ${name}\n  extraArgs:\n${Object.entries(args)
        .map(([key, value]) => `  - key: ${key}\n    value: "${value}"\n`)
        .join('')}`;
    mkdirSync(kwokWorkdir(), { recursive: true });
    writeFileSync(auditPolicy, AUDIT_POLICY);
    writeFileSync(
      file,
      [
        'apiVersion: config.kwok.x-k8s.io/v1alpha1',
        'kind: KwokctlConfiguration',
        // kwok-controller takes a node lease with a fresh identity each time it starts, and waits for
        // its predecessor's lease to expire before it drives that node's pods. kwokctl's default
        // (40 s x heartbeat factor 5) made a restarted cluster ignore pods for up to 200 s; a 20 s
        // lease bounds that wait. The other heartbeat settings keep kwokctl's effective defaults.
        'options:',
        '  heartbeatFactor: 1',
        `  nodeLeaseDurationSeconds: ${NODE_LEASE_SECONDS}`,
        '  nodeStatusUpdateFrequencyMilliseconds: 50000',
        '  kubeControllerManagerNodeMonitorPeriodMilliseconds: 25000',
        '  kubeControllerManagerNodeMonitorGracePeriodMilliseconds: 200000',
        // The API server's record of every request, which `npm test` holds the operator's RBAC to.
        `  kubeAuditPolicy: ${auditPolicy}`,
        'componentsPatches:',
        // A throwaway cluster needs no durability against a power cut, and a WAL fsync that waited
        // 11 s for a busy disk once stalled etcd long enough for kube-controller-manager and
        // kube-scheduler to lose their leases and exit (supervisor.ts starts them again). Without
        // fsync, etcd's writes wait for the page cache only; a killed etcd loses nothing.
        patch('etcd', { 'unsafe-no-fsync': true }),
        patch('kube-apiserver', {
          'audit-log-maxsize': AUDIT_LOG_MAX_MB,
          'audit-log-maxbackup': AUDIT_LOG_BACKUPS,
        }),
        patch('kube-controller-manager', {
          'kube-api-qps': KCM_QPS,
          'kube-api-burst': KCM_BURST,
          'concurrent-deployment-syncs': KCM_WORKERS,
          'concurrent-replicaset-syncs': KCM_WORKERS,
        }),
        patch('kube-scheduler', { 'kube-api-qps': SCHEDULER_QPS, 'kube-api-burst': SCHEDULER_BURST }),
        '---',
        'apiVersion: config.kwok.x-k8s.io/v1alpha1',
        'kind: KwokConfiguration',
        // A KwokConfiguration given to kwokctl replaces kwok's defaults instead of merging with them
        // (an unset nodeLeaseParallelism stops kwok-controller), so every option keeps its default here.
        'options:',
        '  cidr: 10.0.0.0/24',
        '  enableDebuggingHandlers: true',
        '  enableContentionProfiling: false',
        '  enableProfilingHandler: true',
        `  podPlayStageParallelism: ${KWOK_POD_PARALLELISM}`,
        '  nodePlayStageParallelism: 4',
        '  nodeLeaseParallelism: 4',
        '  podsOnNodeSyncParallelism: 1',
        '  enablePodsOnNodeSyncListPager: true',
        '  enablePodsOnNodeSyncStreamWatch: false',
        '---',
        // kwok's default stages plus one for pods that never become Ready (see kwok-stages.ts).
        kwokStagesYaml(),
      ].join('\n'),
    );
    return file;
  }

  private createArgs(): string[] {
    const t = this.tools;
    return [
      '--runtime',
      'binary',
      '--kube-apiserver-binary',
      t.kubeApiserver,
      '--kube-controller-manager-binary',
      t.kubeControllerManager,
      '--kube-scheduler-binary',
      t.kubeScheduler,
      '--etcd-binary',
      t.etcd,
      '--kwok-controller-binary',
      t.kwok,
      '--config',
      this.configFile(),
    ];
  }

  private async create(): Promise<void> {
    say(`creating the cluster ${this.cluster} with kwokctl --runtime binary`);
    mkdirSync(kwokWorkdir(), { recursive: true });
    const args = [
      'create',
      'cluster',
      ...this.createArgs(),
      '--kubeconfig',
      localKubeconfig(this.cluster),
      '--wait',
      '3m',
    ];
    const result = await this.kwokctl(args, true);
    if (result.code !== 0) {
      throw new Error(
        `kwokctl create cluster failed (exit ${result.code}); logs are in ${clusterDir(this.cluster)}/logs`,
      );
    }
  }

  private async waitForServer(): Promise<string> {
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const version = await this.serverVersion();
      if (version) return version;
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`the API server did not answer within 2 minutes; see ${clusterDir(this.cluster)}/logs`);
  }

  /**
   * Pods on a kwok node become Running only once kwok-controller holds that node's lease. A
   * restarted kwok-controller has a new identity and must wait for the old lease to expire, so `up`
   * returns only when every node's lease is held, unexpired, by the kwok-controller running now
   * (its identity is the `id` of its log lines). A renewal time alone proves nothing: a
   * kwok-controller killed just before the restart renewed the leases a moment earlier.
   */
  private async waitForNodeLeases(): Promise<void> {
    const timeoutMs = (NODE_LEASE_SECONDS * 3 + 30) * 1000;
    const deadline = Date.now() + timeoutMs;
    const startedWaiting = Date.now();
    const starts = { count: 0 };
    for (;;) {
      await this.startIfExited(['kwok-controller'], starts);
      const identity = kwokIdentity(this.cluster);
      const leases = await this.leases('kube-node-lease');
      const unexpiredAfter = Date.now() - NODE_LEASE_SECONDS * 1000;
      const waiting = Array.from({ length: NODE_COUNT }, (_, i) => `kwok-node-${i}`).filter((node) => {
        const lease = leases.get(node);
        return !lease || lease.holder !== identity || Date.parse(lease.renewTime) < unexpiredAfter;
      });
      if (identity && waiting.length === 0) break;
      if (Date.now() > deadline) {
        throw new Error(
          `kwok-controller (${identity ?? 'identity unknown'}) did not take the leases of ${waiting.join(', ')} within ${timeoutMs / 1000}s; see ${clusterDir(this.cluster)}/logs/kwok-controller.log`,
        );
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    const waited = Date.now() - startedWaiting;
    if (waited > 2000) say(`kwok-controller took over the node leases after ${(waited / 1000).toFixed(1)}s`);
  }

  /**
   * A component that exited while `up` waits for it is started again, at most three times a wait:
   * kwok-controller gives up on an API server that has not answered within about 31 s of its start
   * (a cold start on a loaded machine), kube-controller-manager and kube-scheduler exit when they
   * cannot renew their leases. One a test holds down (restartComponent) is left to that test.
   */
  private startIfExited(components: Component[], starts: { count: number }): Promise<void> {
    // The two waits run side by side: one start at a time, each deciding after the one before.
    const next = this.starting.then(() => this.startNowIfExited(components, starts));
    this.starting = next.catch(() => undefined);
    return next;
  }

  private async startNowIfExited(components: Component[], starts: { count: number }): Promise<void> {
    const held = heldComponents(this.cluster);
    const exited = stoppedComponents(this.cluster).filter((c) => components.includes(c) && !held.includes(c));
    if (exited.length === 0) return;
    const why = exited.map((c) => `${c}: ${whyExited(this.cluster, c)}`).join('; ');
    if (starts.count >= 3) {
      throw new Error(
        `${exited.join(' and ')} exited again after ${starts.count} starts while the cluster came up (${why})`,
      );
    }
    starts.count++;
    say(`${exited.join(' and ')} exited while the cluster came up; starting again (${why})`);
    await startStoppedComponents(this.cluster);
  }

  /** Holder and last renewal of the Leases in `namespace` (only `names` when given). */
  private async leases(
    namespace: string,
    names: string[] = [],
  ): Promise<Map<string, { holder: string; renewTime: string; acquireTime: string }>> {
    const out = await this.kubectl([
      'get',
      'lease',
      '-n',
      namespace,
      ...names,
      '--ignore-not-found',
      '-o',
      'jsonpath={range .items[*]}{.metadata.name}={.spec.holderIdentity}={.spec.renewTime}={.spec.acquireTime}{"\\n"}{end}',
    ]);
    return new Map(
      out
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [name = '', holder = '', renewTime = '', acquireTime = ''] = line.split('=');
          return [name, { holder, renewTime, acquireTime }];
        }),
    );
  }

  /**
   * A restarted kube-controller-manager or kube-scheduler has a new identity and waits for its
   * predecessor's leader lease to expire (15 s) before it does anything; until then no pod is
   * scheduled and no ReplicaSet reconciled. Returns once both leases were acquired after `since`.
   */
  private async waitForLeaders(since: number): Promise<void> {
    if (since === 0) return;
    const deadline = Date.now() + 120_000;
    const startedWaiting = Date.now();
    const starts = { count: 0 };
    for (;;) {
      await this.startIfExited(['kube-controller-manager', 'kube-scheduler'], starts);
      const leases = await this.leases('kube-system', ['kube-controller-manager', 'kube-scheduler']);
      const waiting = ['kube-controller-manager', 'kube-scheduler'].filter((name) => {
        const lease = leases.get(name);
        // Taken since the restart: a renewal time alone may be the killed predecessor's last one.
        return !lease?.holder || !lease.acquireTime || Date.parse(lease.acquireTime) < since - 1000;
      });
      if (waiting.length === 0) break;
      if (Date.now() > deadline) {
        throw new Error(
          `${waiting.join(' and ')} did not take the leader lease within 120s; see ${clusterDir(this.cluster)}/logs`,
        );
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    const waited = Date.now() - startedWaiting;
    if (waited > 2000)
      say(`kube-controller-manager and kube-scheduler lead again after ${(waited / 1000).toFixed(1)}s`);
  }

  /**
   * Stops every component and starts them again: a control plane without the heap, caches and
   * watchers that earlier work left behind, with the same data in etcd.
   */
  async restart(): Promise<ClusterInfo> {
    await this.stop();
    return this.up();
  }

  /** Stops every component (SIGTERM), etcd's data kept: up() starts them again. */
  stop(): Promise<void> {
    return withLock(this.cluster, () => stopAllComponents(this.cluster));
  }

  async running(): Promise<boolean> {
    return stoppedComponents(this.cluster).length < COMPONENTS.length;
  }

  /** Nodes, storage, and the default ServiceAccount pods need (written by the serviceaccount controller). */
  private async applyFixtures(): Promise<void> {
    await this.kubectl(['apply', '-f', '-'], `${nodesManifest(NODE_COUNT)}\n---\n${storageClassManifest()}`);
    // apply sets a node's status only when it creates the node: a cluster made before a change of
    // capacity gets it here.
    const capacity = { pods: String(PODS_PER_NODE) };
    for (let i = 0; i < NODE_COUNT; i++) {
      await this.kubectl([
        'patch',
        'node',
        `kwok-node-${i}`,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: { allocatable: capacity, capacity } }),
      ]);
    }
    await this.ensureVolumes(60);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const result = await run(this.tools.kubectl, [
        '--kubeconfig',
        localKubeconfig(this.cluster),
        'get',
        'serviceaccount',
        'default',
        '-n',
        'default',
      ]);
      if (result.code === 0) return;
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error('the default ServiceAccount never appeared: is kube-controller-manager running?');
  }

  /**
   * Tops the pool up so at least `minAvailable` pre-provisioned volumes are free, plus
   * VOLUME_RESERVE for the test file that runs beside the caller (`npm test` runs two at once) and
   * draws on the same pool: volumes are kept (Retain), so each bound claim uses one up, and a claim
   * that finds none waits for the next top-up (100 s, a restore test's whole deadline, on a fresh
   * cluster).
   */
  async ensureVolumes(minAvailable: number): Promise<void> {
    minAvailable += VOLUME_RESERVE;
    const out = await this.kubectl([
      'get',
      'pv',
      '-l',
      'basicoperator.dev/test-pool=true',
      '-o',
      'jsonpath={range .items[*]}{.status.phase}{"\\n"}{end}',
    ]);
    const phases = out.split('\n').filter(Boolean);
    const available = phases.filter((p) => p === 'Available' || p === 'Pending').length;
    if (available >= minAvailable) return;
    await this.kubectl(['apply', '-f', '-'], volumesManifest(phases.length, minAvailable - available));
  }

  async down(): Promise<void> {
    if (!this.exists()) {
      say(`no local cluster ${this.cluster} to delete`);
      return;
    }
    const result = await this.kwokctl(
      ['delete', 'cluster', '--kubeconfig', localKubeconfig(this.cluster)],
      true,
    );
    if (result.code !== 0) throw new Error(`kwokctl delete cluster failed (exit ${result.code})`);
    say(`cluster ${this.cluster} deleted`);
  }
}
