// Shared pieces of the PodMachine integration tests: a namespace with the PodMachine controller
// running in-process (and, for restores, the VolumeBackup controller's copy half), reads and waits.
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { LocalProvider } from '../../../e2e/providers/local/index.ts';
import { testCluster } from '../../../e2e/support/cluster.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import { POD_MACHINE, type PodMachine, type PodMachineSpec } from '../../../src/apis/index.ts';
import { registerPodMachineController } from '../../../src/controllers/podmachine/index.ts';
import { registerVolumeBackupController } from '../../../src/controllers/volumebackup/index.ts';
import { isNotFound } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { OPERATOR_DEFAULTS } from '../../support/operator-options.ts';
import { type OperatorSuite, startOperatorSuite } from '../../support/suite.ts';

export const PAUSE = 'registry.k8s.io/pause:3.10';

/**
 * The CRDs, `freeVolumes` pre-provisioned volumes for the claims to bind to, a fresh namespace, and
 * a manager running the PodMachine controller (plus the VolumeBackup copy controller with
 * `withBackups`, to make a VolumeBackup to restore from).
 */
export async function startPodMachineSuite(
  prefix: string,
  freeVolumes: number,
  options: { withBackups?: boolean } = {},
): Promise<OperatorSuite> {
  const info = await testCluster();
  if (info.provider === 'local') await new LocalProvider(info.name).ensureVolumes(freeVolumes);
  return startOperatorSuite(prefix, (m) => {
    registerPodMachineController(m, OPERATOR_DEFAULTS);
    if (options.withBackups) registerVolumeBackupController(m, OPERATOR_DEFAULTS);
  });
}

export function podMachine(namespace: string, name: string, spec: Partial<PodMachineSpec> = {}): PodMachine {
  return {
    apiVersion: POD_MACHINE.apiVersion,
    kind: POD_MACHINE.kind,
    metadata: { name, namespace },
    spec: {
      image: PAUSE,
      volumes: [
        { name: 'data', size: '1Gi', mountPath: '/data' },
        { name: 'logs', size: '512Mi', mountPath: '/var/log/app' },
      ],
      ...spec,
    },
  };
}

export async function getPodMachine(
  client: KubeClient,
  ns: string,
  name: string,
): Promise<PodMachine | undefined> {
  try {
    return await client.get<PodMachine>(POD_MACHINE, ns, name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export function waitForPodMachine(
  client: KubeClient,
  ns: string,
  name: string,
  what: string,
  check: (pm: PodMachine) => boolean,
  timeoutMs = 60_000,
): Promise<PodMachine> {
  return waitFor(
    `PodMachine ${name}: ${what}`,
    async () => {
      const pm = await getPodMachine(client, ns, name);
      return pm && check(pm) ? pm : undefined;
    },
    { timeoutMs },
  );
}

/** The contract's readiness: status.ready and a Ready condition for the current generation. */
export const isReady = (pm: PodMachine) => {
  const ready = pm.status?.conditions?.find((c) => c.type === 'Ready');
  return (
    pm.status?.ready === true &&
    ready?.status === 'True' &&
    ready.observedGeneration === pm.metadata.generation
  );
};

export function condition(pm: PodMachine | undefined, type: string) {
  return pm?.status?.conditions?.find((c) => c.type === type);
}

export async function claims(client: KubeClient, ns: string): Promise<V1PersistentVolumeClaim[]> {
  return (await client.list<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim, { namespace: ns }))
    .items;
}

export async function pods(client: KubeClient, ns: string): Promise<V1Pod[]> {
  return (await client.list<V1Pod>(CoreTypes.Pod, { namespace: ns })).items;
}

export async function jobs(client: KubeClient, ns: string): Promise<V1Job[]> {
  return (await client.list<V1Job>(CoreTypes.Job, { namespace: ns })).items;
}

interface EventLike extends KubeObject {
  reason?: string;
  note?: string;
  type?: string;
  regarding?: { kind?: string; name?: string };
}

/** Waits for an events.k8s.io/v1 Event with this reason about the PodMachine; returns it. */
export function waitForEvent(
  client: KubeClient,
  ns: string,
  name: string,
  reason: string,
): Promise<EventLike> {
  return waitFor(
    `a ${reason} Event on PodMachine ${name}`,
    async () =>
      (await client.list<EventLike>(CoreTypes.Event, { namespace: ns })).items.find(
        (e) => e.regarding?.kind === 'PodMachine' && e.regarding.name === name && e.reason === reason,
      ),
    { timeoutMs: 30_000 },
  );
}
