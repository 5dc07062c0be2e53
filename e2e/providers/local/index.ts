import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { run, runOk } from '../exec.ts';
import { NODE_COUNT, nodesManifest, storageClassManifest, volumesManifest } from '../fixtures.ts';
import type { ClusterInfo, ClusterProvider } from '../provider.ts';
import { startStoppedComponents, stoppedComponents } from './components.ts';
import { cacheRoot, ensureToolchain, type Toolchain, toolchainPaths } from './toolchain.ts';

export const CLUSTER_NAME = 'basic-operator';
/** kube-controller-manager's client budget; the operator gets the same in benchmarks. */
export const KCM_QPS = 100;
export const KCM_BURST = 150;

function say(message: string): void {
  process.stderr.write(`[cluster:local] ${message}\n`);
}

export function kwokWorkdir(): string {
  return join(cacheRoot(), 'kwok');
}

export function clusterDir(): string {
  return join(kwokWorkdir(), 'clusters', CLUSTER_NAME);
}

export function localKubeconfig(): string {
  return join(cacheRoot(), 'kubeconfig');
}

/**
 * A real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) built from
 * upstream sources, with kwok simulating the nodes, run as local processes by `kwokctl --runtime binary`.
 */
export class LocalProvider implements ClusterProvider {
  readonly name = 'local' as const;
  private tools: Toolchain = toolchainPaths();

  private kwokctl(args: string[], inherit = false) {
    return run(this.tools.kwokctl, ['--name', CLUSTER_NAME, ...args], {
      env: { KWOK_WORKDIR: kwokWorkdir() },
      inherit,
    });
  }

  private kubectl(args: string[], input?: string) {
    return runOk(this.tools.kubectl, ['--kubeconfig', localKubeconfig(), ...args], { input });
  }

  private async exists(): Promise<boolean> {
    return existsSync(join(clusterDir(), 'kwok.yaml'));
  }

  private async serverVersion(): Promise<string | undefined> {
    if (!existsSync(localKubeconfig()) || !existsSync(this.tools.kubectl)) return undefined;
    const result = await run(this.tools.kubectl, [
      '--kubeconfig',
      localKubeconfig(),
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
      name: CLUSTER_NAME,
      kubeconfig: localKubeconfig(),
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
    mkdirSync(kwokWorkdir(), { recursive: true });
    let version = await this.serverVersion();
    if (version && stoppedComponents().length > 0) {
      say(`restarting stopped components: ${stoppedComponents().join(', ')}`);
      await startStoppedComponents();
    }
    if (!version) {
      if (await this.exists()) {
        say('starting the existing cluster');
        const result = await this.kwokctl(['start', 'cluster', '--kubeconfig', localKubeconfig()], true);
        if (result.code !== 0) {
          say('the existing cluster did not start; recreating it');
          await this.kwokctl(['delete', 'cluster', '--kubeconfig', localKubeconfig()]);
          await this.create();
        }
      } else {
        await this.create();
      }
      version = await this.waitForServer();
    }
    await this.applyFixtures();
    say(
      `cluster ${CLUSTER_NAME} is up (${version}) in ${((Date.now() - started) / 1000).toFixed(1)}s; KUBECONFIG=${localKubeconfig()}`,
    );
    return this.info(version);
  }

  private async create(): Promise<void> {
    say('creating the cluster with kwokctl --runtime binary');
    const t = this.tools;
    const args = [
      'create',
      'cluster',
      '--runtime',
      'binary',
      '--kubeconfig',
      localKubeconfig(),
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
      '--extra-args',
      `kube-controller-manager=kube-api-qps=${KCM_QPS}`,
      '--extra-args',
      `kube-controller-manager=kube-api-burst=${KCM_BURST}`,
      '--wait',
      '3m',
    ];
    const result = await this.kwokctl(args, true);
    if (result.code !== 0)
      throw new Error(
        `kwokctl create cluster failed (exit ${result.code}); logs are in ${clusterDir()}/logs`,
      );
  }

  private async waitForServer(): Promise<string> {
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const version = await this.serverVersion();
      if (version) return version;
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`the API server did not answer within 2 minutes; see ${clusterDir()}/logs`);
  }

  /** Nodes, storage, and the default ServiceAccount pods need (written by the serviceaccount controller). */
  private async applyFixtures(): Promise<void> {
    await this.kubectl(['apply', '-f', '-'], `${nodesManifest(NODE_COUNT)}\n---\n${storageClassManifest()}`);
    await this.ensureVolumes(60);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const result = await run(this.tools.kubectl, [
        '--kubeconfig',
        localKubeconfig(),
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

  /** Tops the pool up so at least `minAvailable` pre-provisioned volumes are free. */
  async ensureVolumes(minAvailable: number): Promise<void> {
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
    if (!(await this.exists())) {
      say('no local cluster to delete');
      return;
    }
    const result = await this.kwokctl(['delete', 'cluster', '--kubeconfig', localKubeconfig()], true);
    if (result.code !== 0) throw new Error(`kwokctl delete cluster failed (exit ${result.code})`);
    say(`cluster ${CLUSTER_NAME} deleted`);
  }

  /** Ports and pids of the running components, for tests that restart them. */
  componentPid(component: 'kube-apiserver' | 'etcd' | 'kube-controller-manager'): number | undefined {
    const file = join(clusterDir(), 'pids', `${component}.pid`);
    return existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : undefined;
  }
}
