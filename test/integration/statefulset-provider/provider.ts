// The StatefulSetMachine provider against the local control plane: its CRD and RBAC applied as a
// user would (kubectl apply -k), and the provider run as its own process (main.ts), authenticated as
// its ServiceAccount through a token, so its RBAC is exactly what it gets.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { runOk } from '../../../e2e/providers/exec.ts';
import { LocalProvider } from '../../../e2e/providers/local/index.ts';
import { testCluster } from '../../../e2e/support/cluster.ts';
import { installCrds } from '../../../e2e/support/crds.ts';
import { OperatorProcess } from '../../../e2e/support/operator-process.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  STATEFULSET_MACHINE,
  type StatefulSetMachine,
  type StatefulSetMachineSpec,
} from '../../../examples/statefulset-provider/src/api.ts';
import { ADOPTABLE_BY_ANNOTATION } from '../../../src/apis/index.ts';
import { isNotFound } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';

const EXAMPLE = fileURLToPath(new URL('../../../examples/statefulset-provider/', import.meta.url));
export const PROVIDER_NAMESPACE = 'statefulset-provider-system';
const SERVICE_ACCOUNT = 'statefulset-provider';

async function kubectl(args: string[]): Promise<string> {
  const info = await testCluster();
  return runOk(info.kubectl, ['--kubeconfig', info.kubeconfig, ...args]);
}

/**
 * The operator's CRDs (VolumeBackup), the provider's CRD (applying it is what proves its schema
 * structural), its namespace and RBAC, and `freeVolumes` pre-provisioned volumes for the claims.
 */
export async function installProvider(freeVolumes: number): Promise<void> {
  await installCrds();
  await kubectl(['apply', '-f', join(EXAMPLE, 'deploy', 'namespace.yaml')]);
  await kubectl(['apply', '--server-side', '--force-conflicts', '-k', join(EXAMPLE, 'crd')]);
  await kubectl(['apply', '-k', join(EXAMPLE, 'rbac')]);
  await kubectl([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    `crd/${STATEFULSET_MACHINE.plural}.${STATEFULSET_MACHINE.group}`,
  ]);
  const info = await testCluster();
  if (info.provider === 'local') await new LocalProvider(info.name).ensureVolumes(freeVolumes);
}

/** A kubeconfig for the test cluster whose user is the provider's ServiceAccount. */
async function serviceAccountKubeconfig(): Promise<string> {
  const info = await testCluster();
  const token = (
    await kubectl(['create', 'token', SERVICE_ACCOUNT, '-n', PROVIDER_NAMESPACE, '--duration=1h'])
  ).trim();
  const admin = new KubeConfig();
  admin.loadFromFile(info.kubeconfig);
  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error(`${info.kubeconfig} has no current cluster`);
  const caData =
    cluster.caData ?? (cluster.caFile ? readFileSync(cluster.caFile).toString('base64') : undefined);
  const path = join(mkdtempSync(join(tmpdir(), 'statefulset-provider-')), 'kubeconfig.json');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server: cluster.server, 'certificate-authority-data': caData } }],
    users: [{ name: SERVICE_ACCOUNT, user: { token } }],
    contexts: [{ name: 'provider', context: { cluster: 'test', user: SERVICE_ACCOUNT } }],
    'current-context': 'provider',
  };
  writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
  return path;
}

/**
 * Starts `node examples/statefulset-provider/src/main.ts` for namespace `ns`, as the ServiceAccount,
 * and waits until its controller runs. `extraArgs` come last (e.g. --leader-elect).
 */
export async function startProvider(ns: string, extraArgs: string[] = []): Promise<OperatorProcess> {
  const kubeconfig = await serviceAccountKubeconfig();
  const provider = new OperatorProcess({
    name: 'statefulset-provider',
    args: [
      join(EXAMPLE, 'src', 'main.ts'),
      '--kubeconfig',
      kubeconfig,
      '--namespaces',
      ns,
      '--metrics-bind-address',
      '0',
      '--health-probe-bind-address',
      '127.0.0.1:0',
      '--log-level',
      'info',
      ...extraArgs,
    ],
    env: { ...process.env, POD_NAMESPACE: PROVIDER_NAMESPACE, KUBECONFIG: '' },
    ...(process.env.TEST_PROVIDER_LOG ? { echo: process.stderr } : {}),
  });
  try {
    await provider.controllersStarted(90_000);
  } catch (err) {
    await provider.stop({ signal: 'SIGKILL' });
    throw err;
  } finally {
    // The provider read its token at start; the file holds it and is not left behind.
    rmSync(dirname(kubeconfig), { recursive: true, force: true });
  }
  return provider;
}

export function statefulSetMachine(
  ns: string,
  name: string,
  spec: Partial<StatefulSetMachineSpec> = {},
): StatefulSetMachine {
  return {
    apiVersion: STATEFULSET_MACHINE.apiVersion,
    kind: STATEFULSET_MACHINE.kind,
    // The Machine of the same name, if there is one, may adopt it.
    metadata: { name, namespace: ns, annotations: { [ADOPTABLE_BY_ANNOTATION]: name } },
    spec: {
      image: 'registry.k8s.io/pause:3.10',
      volumes: [
        { name: 'data', size: '1Gi', mountPath: '/data' },
        { name: 'logs', size: '512Mi', mountPath: '/var/log/app' },
      ],
      ...spec,
    },
  };
}

export async function getLive<T extends { metadata?: object }>(
  read: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Waits until the StatefulSetMachine's status passes `check`; returns it. */
export function waitForMachine(
  client: KubeClient,
  ns: string,
  name: string,
  what: string,
  check: (m: StatefulSetMachine) => boolean,
  timeoutMs = 90_000,
): Promise<StatefulSetMachine> {
  return waitFor(
    `StatefulSetMachine ${name}: ${what}`,
    async () => {
      const m = await getLive(() => client.get(STATEFULSET_MACHINE, ns, name));
      return m && check(m) ? m : undefined;
    },
    { timeoutMs, intervalMs: 250 },
  );
}

/** Reason of the Ready condition. */
export const readyReason = (m: StatefulSetMachine) =>
  m.status?.conditions?.find((c) => c.type === 'Ready')?.reason;
