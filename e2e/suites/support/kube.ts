import { type RunResult, run } from '../../providers/exec.ts';
import type { ClusterInfo } from '../../providers/provider.ts';

/** kubectl and helm against the test cluster, as a user would type them. */
export class ClusterTools {
  readonly cluster: ClusterInfo;

  constructor(cluster: ClusterInfo) {
    this.cluster = cluster;
  }

  kubectl(args: string[], input?: string): Promise<RunResult> {
    return run(this.cluster.kubectl, ['--kubeconfig', this.cluster.kubeconfig, ...args], {
      input,
      timeoutMs: 240_000,
    });
  }

  /** kubectl that must succeed; returns stdout, or throws with the command and its output. */
  async kubectlOk(args: string[], input?: string): Promise<string> {
    return ok('kubectl', args, await this.kubectl(args, input));
  }

  /** `kubectl get ... -o json`, parsed; T is the caller's view of the object's shape. */
  async getJson<T>(args: string[]): Promise<T> {
    return JSON.parse(await this.kubectlOk(['get', ...args, '-o', 'json'])) as T;
  }

  /** The items of `kubectl get <type> -n <namespace> [-l selector]`. */
  async list<T>(type: string, namespace: string, selector?: string): Promise<T[]> {
    const args = [type, '-n', namespace, ...(selector ? ['-l', selector] : [])];
    return (await this.getJson<{ items: T[] }>(args)).items;
  }

  helm(args: string[]): Promise<RunResult> {
    return run(this.cluster.helm, ['--kubeconfig', this.cluster.kubeconfig, ...args], {
      timeoutMs: 300_000,
    });
  }

  async helmOk(args: string[]): Promise<string> {
    return ok('helm', args, await this.helm(args));
  }
}

function ok(tool: string, args: string[], result: RunResult): string {
  if (result.code !== 0) {
    throw new Error(
      `${tool} ${args.join(' ')} failed (exit ${result.code}):\n${result.stderr}${result.stdout}`,
    );
  }
  return result.stdout;
}
