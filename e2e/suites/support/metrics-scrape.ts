import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { V1Container, V1Deployment } from '@kubernetes/client-node';
import { runOk } from '../../providers/exec.ts';
import type { ClusterInfo } from '../../providers/provider.ts';
import { httpGet } from '../../support/http.ts';
import { httpsGet } from '../../support/https.ts';

/**
 * How the end-to-end suites read the operator's /metrics: as Prometheus does, with the token of a
 * ServiceAccount bound to the chart's metrics-reader ClusterRole, over HTTPS without verifying the
 * self-signed certificate; over plain HTTP when the release runs with metrics.secure=false.
 */

const SCRAPER = 'e2e-metrics-scraper';

/** Whether the Deployment's operator serves /metrics over HTTPS (BASIC_OPERATOR_METRICS_SECURE). */
export function metricsSecure(container: V1Container): boolean {
  const value = container.env?.find((e) => e.name === 'BASIC_OPERATOR_METRICS_SECURE')?.value;
  return value === undefined || !['false', '0', 'no'].includes(value.toLowerCase());
}

/**
 * A token of ServiceAccount e2e-metrics-scraper in the release's namespace, bound to the release's
 * metrics-reader ClusterRole. The binding is owned by that ClusterRole, so uninstalling the
 * release removes it too.
 */
export class MetricsReader {
  private token: Promise<string> | undefined;
  private readonly cluster: ClusterInfo;

  constructor(cluster: ClusterInfo) {
    this.cluster = cluster;
  }

  tokenFor(deployment: V1Deployment): Promise<string> {
    this.token ??= this.create(deployment).catch((err: unknown) => {
      this.token = undefined;
      throw err;
    });
    return this.token;
  }

  private kubectl(args: string[], input?: string): Promise<string> {
    return runOk(this.cluster.kubectl, ['--kubeconfig', this.cluster.kubeconfig, ...args], {
      input,
      timeoutMs: 60_000,
    });
  }

  private async create(deployment: V1Deployment): Promise<string> {
    const namespace = deployment.metadata?.namespace ?? '';
    const role = `${deployment.metadata?.name}-metrics-reader`;
    const uid = (await this.kubectl(['get', 'clusterrole', role, '-o', 'jsonpath={.metadata.uid}'])).trim();
    const objects = [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SCRAPER, namespace } },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: {
          name: `${role}-${namespace}-e2e`.slice(0, 253),
          ownerReferences: [
            { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: role, uid },
          ],
        },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
        subjects: [{ kind: 'ServiceAccount', name: SCRAPER, namespace }],
      },
    ];
    await this.kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
    );
    return (await this.kubectl(['create', 'token', SCRAPER, '-n', namespace, '--duration=2h'])).trim();
  }
}

/** GET /metrics on a local port: the body, or an error naming the status. */
export async function scrapeLocalPort(port: number, token: string | undefined): Promise<string> {
  const { status, body } =
    token === undefined ? await httpGet(port, '/metrics') : await httpsGet(port, '/metrics', { token });
  if (status !== 200) throw new Error(`GET /metrics answered ${status}: ${body}`);
  return body;
}

/** Runs `use` with a `kubectl port-forward` of the pod's port to a free local port. */
export async function withPortForward<T>(
  cluster: ClusterInfo,
  namespace: string,
  pod: string,
  port: number,
  use: (localPort: number) => Promise<T>,
): Promise<T> {
  const child = spawn(
    cluster.kubectl,
    ['--kubeconfig', cluster.kubeconfig, 'port-forward', '-n', namespace, `pod/${pod}`, `:${port}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  try {
    const localPort = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`port-forward to ${pod}:${port} did not start in 30s`)),
        30_000,
      );
      createInterface({ input: child.stdout }).on('line', (line) => {
        const match = /^Forwarding from 127\.0\.0\.1:(\d+)/.exec(line);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`port-forward to ${pod}:${port} exited with ${code}`));
      });
    });
    return await use(localPort);
  } finally {
    child.kill('SIGTERM');
  }
}
