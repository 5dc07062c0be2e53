import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run, runOk } from '../exec.ts';
import { withFileLock } from '../local/lock.ts';
import { cacheRoot, ensureToolchain, VERSIONS } from '../local/toolchain.ts';
import type { ClusterInfo, ClusterProvider } from '../provider.ts';
import { clusterConfig } from './cluster-config.ts';
import { type ContainerEngine, detectEngine, imageId } from './engine.ts';
import { ensureOperatorImage, OPERATOR_IMAGE } from './images/operator.ts';
import { ensurePostgresImage } from './images/postgres.ts';
import { ensureWorkloadImage } from './images/workload.ts';
import { shortenLocalPathHelperTimeout } from './local-path.ts';
import { ensureLocalNodeImage } from './node/index.ts';
import { registryReachable } from './registry.ts';

export const KIND_CLUSTER = process.env.BASIC_OPERATOR_KIND_CLUSTER || 'basic-operator';
export const IMAGE = OPERATOR_IMAGE;

function say(message: string): void {
  process.stderr.write(`[cluster:kind] ${message}\n`);
}

/**
 * Which images the cluster runs: `upstream` (kind's own node image, public base images, pulled
 * from their registries) or `local` (everything built on this machine, for machines with no
 * registry). BASIC_OPERATOR_KIND_IMAGES chooses; by default, upstream where Docker Hub answers.
 */
export type ImageSource = 'upstream' | 'local';

async function imageSource(): Promise<ImageSource> {
  const chosen = process.env.BASIC_OPERATOR_KIND_IMAGES;
  if (chosen === 'upstream' || chosen === 'local') return chosen;
  if (chosen) throw new Error(`BASIC_OPERATOR_KIND_IMAGES=${chosen}: use upstream or local`);
  return (await registryReachable()) ? 'upstream' : 'local';
}

/**
 * kind clusters on Docker or Podman: real kubelets and containers, the operator image built from
 * the repository's Dockerfile and loaded into the node. Where no registry answers, the node image,
 * every image it runs and the operator's base images are built here first (see docs/local-cluster.md).
 */
export class KindProvider implements ClusterProvider {
  readonly name = 'kind' as const;
  readonly cluster = KIND_CLUSTER;
  private readonly kubeconfig = join(cacheRoot(), `kind-kubeconfig-${KIND_CLUSTER}`);

  private async kind(engine?: ContainerEngine): Promise<{ bin: string; env: Record<string, string> }> {
    const gobin = join(cacheRoot(), `kind-${VERSIONS.kind}`);
    const bin = join(gobin, 'kind');
    if (!existsSync(bin)) {
      say(`building kind ${VERSIONS.kind} from the Go module proxy`);
      await runOk('go', ['install', `sigs.k8s.io/kind@${VERSIONS.kind}`], {
        env: { GOBIN: gobin, GOTOOLCHAIN: 'local' },
        inherit: true,
      });
    }
    const env: Record<string, string> =
      engine?.name === 'podman' ? { KIND_EXPERIMENTAL_PROVIDER: 'podman' } : {};
    return { bin, env };
  }

  async status(): Promise<ClusterInfo | undefined> {
    if (!existsSync(this.kubeconfig)) return undefined;
    const tools = await ensureToolchain();
    const result = await run(tools.kubectl, [
      '--kubeconfig',
      this.kubeconfig,
      'version',
      '-o',
      'json',
      '--request-timeout=5s',
    ]);
    if (result.code !== 0) return undefined;
    const version =
      (JSON.parse(result.stdout) as { serverVersion?: { gitVersion?: string } }).serverVersion?.gitVersion ??
      '';
    const source = (await imageSource().catch(() => 'upstream')) as ImageSource;
    return {
      provider: 'kind',
      name: KIND_CLUSTER,
      kubeconfig: this.kubeconfig,
      kubectl: tools.kubectl,
      helm: tools.helm,
      serverVersion: version,
      images: await this.images(source),
    };
  }

  /** The images the suites run in pods (a shell and core utilities). */
  private async images(source: ImageSource): Promise<NonNullable<ClusterInfo['images']>> {
    if (source === 'upstream') return { workload: 'busybox:1.36', operator: IMAGE };
    const probe = await detectEngine();
    if (!probe.engine) throw new Error(probe.reason);
    return { workload: await ensureWorkloadImage(probe.engine), operator: IMAGE };
  }

  up(): Promise<ClusterInfo> {
    // Two test processes bringing the same cluster up would race on `kind create`.
    return withFileLock(join(cacheRoot(), `kind-${KIND_CLUSTER}.lock`), 90 * 60_000, () => this.bringUp());
  }

  private async bringUp(): Promise<ClusterInfo> {
    const probe = await detectEngine();
    if (!probe.engine) throw new Error(`kind needs a container engine: ${probe.reason}`);
    const engine = probe.engine;
    const tools = await ensureToolchain();
    const kind = await this.kind(engine);
    const source = await imageSource();
    say(`engine ${engine.name}; images: ${source}`);
    const nodeImage = source === 'local' ? await ensureLocalNodeImage(engine) : undefined;
    const workload = source === 'local' ? await ensureWorkloadImage(engine) : undefined;

    // A cluster made from another build of the node image (or another image) is made again.
    // A cluster whose node stopped (the engine restarted) is made again too: kind nodes do not
    // come back reliably.
    const node = await this.controlPlaneNode(engine);
    const wanted = nodeImage ? await imageId(engine, nodeImage) : undefined;
    const stale = node !== undefined && ((wanted !== undefined && node.image !== wanted) || !node.running);
    if (stale) {
      say(
        node.running
          ? `the cluster runs another node image than ${nodeImage}: recreating it`
          : "the cluster's node container is not running: recreating the cluster",
      );
      await runOk(kind.bin, ['delete', 'cluster', '--name', KIND_CLUSTER], { env: kind.env, inherit: true });
    }
    if (node === undefined || stale) {
      const configFile = join(cacheRoot(), `kind-config-${KIND_CLUSTER}.yaml`);
      mkdirSync(cacheRoot(), { recursive: true });
      writeFileSync(configFile, clusterConfig({ nodeImage }));
      say(`creating the kind cluster ${KIND_CLUSTER}${nodeImage ? ` from ${nodeImage}` : ''}`);
      const started = Date.now();
      await runOk(
        kind.bin,
        [
          'create',
          'cluster',
          '--name',
          KIND_CLUSTER,
          '--config',
          configFile,
          '--kubeconfig',
          this.kubeconfig,
          '--wait',
          '5m',
        ],
        { env: kind.env, inherit: true, timeoutMs: 15 * 60_000 },
      );
      say(`cluster created in ${((Date.now() - started) / 1000).toFixed(0)}s`);
    } else {
      await runOk(
        kind.bin,
        ['export', 'kubeconfig', '--name', KIND_CLUSTER, '--kubeconfig', this.kubeconfig],
        {
          env: kind.env,
        },
      );
    }

    await ensureOperatorImage(engine, { localBases: source === 'local' });
    const postgres = await this.postgresImage(engine, source);
    for (const image of [IMAGE, ...(workload ? [workload] : []), ...(postgres ? [postgres] : [])]) {
      say(`loading ${image} into the nodes`);
      await runOk(kind.bin, ['load', 'docker-image', image, '--name', KIND_CLUSTER], { env: kind.env });
    }
    await runOk(tools.kubectl, [
      '--kubeconfig',
      this.kubeconfig,
      'wait',
      '--for=condition=Ready',
      'nodes',
      '--all',
      '--timeout=180s',
    ]);
    await shortenLocalPathHelperTimeout(tools.kubectl, this.kubeconfig);
    const info = await this.status();
    if (!info) throw new Error(`the kind cluster ${KIND_CLUSTER} does not answer`);
    return info;
  }

  /**
   * The PostgreSQL image of the SampleDB suite (built from Debian's packages with the host's
   * apt-get). With upstream images a host without apt-get still gets a cluster: the suite's pods
   * then fail to pull it, and this says why.
   */
  private async postgresImage(engine: ContainerEngine, source: ImageSource): Promise<string | undefined> {
    if (source === 'local') return ensurePostgresImage(engine);
    try {
      return await ensurePostgresImage(engine);
    } catch (err) {
      say(`the PostgreSQL image was not built (${err instanceof Error ? err.message : String(err)})`);
      return undefined;
    }
  }

  /** The cluster's control-plane container is running. */
  async running(): Promise<boolean> {
    const { engine } = await detectEngine();
    return engine !== undefined && (await this.controlPlaneNode(engine))?.running === true;
  }

  /**
   * Stops the node container, kept for a look at its logs; up() makes the cluster again (a kind node
   * does not come back reliably once stopped).
   */
  async stop(): Promise<void> {
    const { engine } = await detectEngine();
    if (!engine || !(await this.controlPlaneNode(engine))?.running) return;
    await runOk(engine.bin, ['stop', `${KIND_CLUSTER}-control-plane`]);
  }

  /** The image ID and state of the cluster's control-plane container, or undefined without one. */
  private async controlPlaneNode(
    engine: ContainerEngine,
  ): Promise<{ image: string; running: boolean } | undefined> {
    const result = await run(engine.bin, [
      'inspect',
      '--format',
      '{{.Image}} {{.State.Running}}',
      `${KIND_CLUSTER}-control-plane`,
    ]);
    if (result.code !== 0) return undefined;
    const [image = '', running] = result.stdout.trim().split(' ');
    return { image, running: running === 'true' };
  }

  async down(): Promise<void> {
    const probe = await detectEngine();
    const kind = await this.kind(probe.engine);
    await runOk(kind.bin, ['delete', 'cluster', '--name', KIND_CLUSTER], { env: kind.env, inherit: true });
  }
}
