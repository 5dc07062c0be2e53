import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STATEFULSET_MACHINE } from '../../../examples/statefulset-provider/src/api.ts';
import { OperatorProcess } from '../../support/operator-process.ts';
import type { ClusterTools } from './kube.ts';
import { REPO_ROOT } from './release.ts';
import { serviceAccountKubeconfig } from './service-account-kubeconfig.ts';

/**
 * The StatefulSetMachine example provider (examples/statefulset-provider) as its README tells a
 * user to run it beside the operator: its CRD and rbac/ applied with kubectl, and its program started
 * on this host with a kubeconfig whose user is its own ServiceAccount (a token), so the RBAC of
 * rbac/ is exactly what it gets. The API server of either cluster provider is reachable from here.
 */

const EXAMPLE_DIR = join(REPO_ROOT, 'examples', 'statefulset-provider');
/** Where rbac/ puts the provider's ServiceAccount (deploy/namespace.yaml makes the namespace). */
export const PROVIDER_SERVICE_ACCOUNT = {
  name: 'statefulset-provider',
  namespace: 'statefulset-provider-system',
};
export const STATEFULSET_MACHINE_CRD = `${STATEFULSET_MACHINE.plural}.${STATEFULSET_MACHINE.group}`;

/**
 * Applies the provider's namespace, CRD (server-side: other tests apply the same one) and rbac/,
 * and waits until the CRD is served. All are cluster-wide or in the provider's own namespace and
 * shared with other tests on the cluster, like the operator's CRDs: never deleted.
 */
export async function applyStatefulSetProvider(tools: ClusterTools): Promise<void> {
  await tools.kubectlOk(['apply', '-f', join(EXAMPLE_DIR, 'deploy', 'namespace.yaml')]);
  await tools.kubectlOk(['apply', '--server-side', '--force-conflicts', '-k', join(EXAMPLE_DIR, 'crd')]);
  await tools.kubectlOk(['apply', '-k', join(EXAMPLE_DIR, 'rbac')]);
  await tools.kubectlOk([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    `crd/${STATEFULSET_MACHINE_CRD}`,
  ]);
}

export interface ServiceAccountRef {
  name: string;
  namespace: string;
}

/**
 * Writes a kubeconfig with the server and CA of the test kubeconfig and a one-hour token of the
 * ServiceAccount as its user.
 */
export async function writeServiceAccountKubeconfig(
  tools: ClusterTools,
  serviceAccount: ServiceAccountRef,
  file: string,
): Promise<void> {
  const token = (
    await tools.kubectlOk([
      'create',
      'token',
      serviceAccount.name,
      '-n',
      serviceAccount.namespace,
      '--duration=1h',
    ])
  ).trim();
  const config = serviceAccountKubeconfig(tools.cluster.kubeconfig, serviceAccount.name, token);
  writeFileSync(file, config, { mode: 0o600 });
}

export interface StartOptions {
  /** The only namespace it watches (--namespaces). */
  namespace: string;
  /** Its kubeconfig and log are written here. */
  workdir: string;
  /** --restore-job-image (an image with the mover); the provider's default when omitted. */
  restoreJobImage?: string | undefined;
}

/**
 * Starts `node examples/statefulset-provider/src/main.ts` as its ServiceAccount for one namespace,
 * with no metrics and its probes on a free loopback port, and waits until its controller runs.
 */
export async function startStatefulSetProvider(
  tools: ClusterTools,
  options: StartOptions,
): Promise<OperatorProcess> {
  const kubeconfig = join(options.workdir, 'statefulset-provider-kubeconfig.json');
  await writeServiceAccountKubeconfig(tools, PROVIDER_SERVICE_ACCOUNT, kubeconfig);
  const provider = new OperatorProcess({
    name: 'statefulset-provider',
    args: [
      join(EXAMPLE_DIR, 'src', 'main.ts'),
      '--kubeconfig',
      kubeconfig,
      '--namespaces',
      options.namespace,
      '--metrics-bind-address',
      '0',
      '--health-probe-bind-address',
      '127.0.0.1:0',
      '--log-level',
      'info',
      ...(options.restoreJobImage ? ['--restore-job-image', options.restoreJobImage] : []),
    ],
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      POD_NAMESPACE: PROVIDER_SERVICE_ACCOUNT.namespace,
    },
    logFile: join(options.workdir, 'statefulset-provider.log'),
  });
  try {
    await provider.controllersStarted(90_000);
  } catch (err) {
    await provider.stop({ signal: 'SIGKILL' });
    throw err;
  }
  return provider;
}
