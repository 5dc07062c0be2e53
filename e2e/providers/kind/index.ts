import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, runOk } from '../exec.ts';
import { cacheRoot, ensureToolchain, VERSIONS } from '../local/toolchain.ts';
import type { ClusterInfo, ClusterProvider } from '../provider.ts';

export const KIND_CLUSTER = 'basic-operator';
export const IMAGE = 'basic-operator:dev';
const REPO_ROOT = join(fileURLToPath(import.meta.url), '..', '..', '..', '..');

function say(message: string): void {
  process.stderr.write(`[cluster:kind] ${message}\n`);
}

/**
 * The same interface on kind, for machines with Docker: real kubelets, the operator image built
 * with `docker build` and loaded with `kind load`. kubectl and helm come from the shared toolchain.
 */
export class KindProvider implements ClusterProvider {
  readonly name = 'kind' as const;
  private readonly kubeconfig = join(cacheRoot(), 'kind-kubeconfig');

  private async kind(): Promise<string> {
    const gobin = join(cacheRoot(), 'kind-bin');
    await runOk('go', ['install', `sigs.k8s.io/kind@${VERSIONS.kind}`], {
      env: { GOBIN: gobin },
      inherit: true,
    });
    return join(gobin, 'kind');
  }

  async status(): Promise<ClusterInfo | undefined> {
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
    return {
      provider: 'kind',
      name: KIND_CLUSTER,
      kubeconfig: this.kubeconfig,
      kubectl: tools.kubectl,
      helm: tools.helm,
      serverVersion: version,
    };
  }

  async up(): Promise<ClusterInfo> {
    await ensureToolchain();
    const kind = await this.kind();
    const clusters = await runOk(kind, ['get', 'clusters']);
    if (!clusters.split('\n').includes(KIND_CLUSTER)) {
      say('creating the kind cluster');
      await runOk(
        kind,
        ['create', 'cluster', '--name', KIND_CLUSTER, '--kubeconfig', this.kubeconfig, '--wait', '3m'],
        { inherit: true },
      );
    }
    say(`building ${IMAGE}`);
    await runOk('docker', ['build', '-t', IMAGE, REPO_ROOT], { inherit: true });
    await runOk(kind, ['load', 'docker-image', IMAGE, '--name', KIND_CLUSTER], { inherit: true });
    // kind ships its own default StorageClass `standard` (local-path, provisioning real volumes),
    // which the suites use as they are: nothing to add.
    const info = await this.status();
    if (!info) throw new Error('the kind cluster does not answer');
    return info;
  }

  async down(): Promise<void> {
    const kind = await this.kind();
    await runOk(kind, ['delete', 'cluster', '--name', KIND_CLUSTER], { inherit: true });
  }
}
