// Shared pieces of the Machine and VolumeBackup integration tests.
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { LocalProvider } from '../../../e2e/providers/local/index.ts';
import { testCluster } from '../../../e2e/support/cluster.ts';
import { installCrds } from '../../../e2e/support/crds.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  MACHINE,
  type Machine,
  type MachineSpec,
  type MachineVolume,
  POD_MACHINE,
  type PodMachine,
  VOLUME_BACKUP,
  type VolumeBackup,
} from '../../../src/apis/index.ts';
import { registerMachineController } from '../../../src/controllers/machine/index.ts';
import { registerMachineBackupController } from '../../../src/controllers/machinebackup/index.ts';
import { registerPodMachineController } from '../../../src/controllers/podmachine/index.ts';
import {
  registerVolumeBackupController,
  type VolumeBackupOptions,
} from '../../../src/controllers/volumebackup/index.ts';
import { isNotFound } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import type { Manager } from '../../../src/runtime/manager/manager.ts';
import type { Condition } from '../../../src/runtime/write/conditions.ts';
import { OPERATOR_DEFAULTS } from '../../support/operator-options.ts';
import { type OperatorSuite, startOperatorSuite, stopOperatorSuite } from '../../support/suite.ts';

/**
 * Applies the CRDs (idempotent) and makes sure enough pre-provisioned volumes are free. The CRDs go
 * in as every suite applies them (installCrds: server-side apply): a client-side `kubectl apply`
 * between two server-side ones rewrites every CRD each time (the last-applied annotation flips
 * between two spellings), and each rewrite wakes the Machines of every running test file.
 */
export async function prepareCluster(freeVolumes: number): Promise<void> {
  const info = await testCluster();
  await installCrds();
  if (info.provider === 'local') await new LocalProvider(info.name).ensureVolumes(freeVolumes);
}

/** What the manager's cache has seen change of the CustomResourceDefinitions of one API group. */
export interface CrdChanges {
  /** Adds, updates and deletes since watchCrdChanges() returned. */
  readonly count: number;
}

/**
 * Counts, from now on, the changes the manager's cache sees of the CustomResourceDefinitions of
 * `group`, whoever makes them (another test file applying the CRDs, an upgrade). The Machine
 * controller wakes every Machine whose provider kind is of that group for each (a kind may just
 * have been installed or become Established), so a count of its reconciles includes one per change.
 * Waits for the manager's caches first: the handler then sees changes, not the initial list.
 */
export async function watchCrdChanges(manager: Manager, group: string): Promise<CrdChanges> {
  await manager.cache.waitForSync();
  const crds = manager.cache.informerFor<KubeObject>(CoreTypes.CustomResourceDefinition, {
    metadataOnly: true,
  });
  const inGroup = (crd: KubeObject) => crd.metadata?.name?.endsWith(`.${group}`) === true;
  let replaying = true;
  let count = 0;
  crds.addHandler({
    onAdd: (crd) => {
      if (!replaying && inGroup(crd)) count++;
    },
    onUpdate: (_, crd) => {
      if (inGroup(crd)) count++;
    },
    onDelete: (crd) => {
      if (inGroup(crd)) count++;
    },
  });
  replaying = false; // addHandler told it about every cached CRD at once
  return {
    get count() {
      return count;
    },
  };
}

/**
 * Clears the finalizers of every Machine left in `ns` (the Machine controller's
 * infra.basicoperator.dev/machine, the VolumeBackup controller's and any a test added), after the
 * operator stopped, so deleting the namespace does not hang on a finalizer nobody will remove.
 */
export async function releaseMachines(client: KubeClient, ns: string): Promise<void> {
  const list = await client
    .list<Machine>(MACHINE, { namespace: ns })
    .catch(() => ({ items: [] as Machine[] }));
  for (const m of list.items) {
    if (!m.metadata.finalizers?.length) continue;
    await client
      .patch(MACHINE, {
        namespace: ns,
        name: m.metadata.name ?? '',
        patchType: 'merge',
        body: { metadata: { finalizers: null } },
      })
      .catch(() => undefined);
  }
}

export const TWO_VOLUMES: MachineVolume[] = [
  { name: 'data', size: '1Gi', mountPath: '/data' },
  { name: 'logs', size: '512Mi', mountPath: '/var/log/app' },
];

export function machine(namespace: string, name: string, spec: Partial<MachineSpec> = {}): Machine {
  return {
    apiVersion: MACHINE.apiVersion,
    kind: MACHINE.kind,
    metadata: { name, namespace },
    spec: { image: 'registry.k8s.io/pause:3.10', volumes: TWO_VOLUMES, ...spec },
  };
}

export async function getMachine(client: KubeClient, ns: string, name: string): Promise<Machine | undefined> {
  try {
    return await client.get<Machine>(MACHINE, ns, name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
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

/** The uid of the object's controller owner, if it has one. */
export function controllerUid(obj: KubeObject | undefined): string | undefined {
  return obj?.metadata?.ownerReferences?.find((r) => r.controller === true)?.uid;
}

export function condition(obj: { status?: { conditions?: Condition[] } } | undefined, type: string) {
  return obj?.status?.conditions?.find((c) => c.type === type);
}

export async function waitForMachine(
  client: KubeClient,
  ns: string,
  name: string,
  what: string,
  check: (m: Machine) => boolean,
  timeoutMs = 60_000,
): Promise<Machine> {
  let last: Machine | undefined;
  try {
    return await waitFor(
      `Machine ${name}: ${what}`,
      async () => {
        last = await getMachine(client, ns, name);
        return last && check(last) ? last : undefined;
      },
      { timeoutMs },
    );
  } catch (err) {
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}; last seen: ${describeMachine(last)}`,
    );
  }
}

/** A Machine's phase and conditions in one line, for a wait that timed out. */
function describeMachine(m: Machine | undefined): string {
  if (!m) return 'absent';
  const conditions = (m.status?.conditions ?? []).map(
    (c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`,
  );
  return `phase ${m.status?.phase ?? '(none)'}; ${conditions.join('; ') || 'no conditions'}`;
}

export async function waitForGone(client: KubeClient, ns: string, name: string, timeoutMs = 60_000) {
  await waitFor(
    `Machine ${name} to be gone`,
    async () => (await getMachine(client, ns, name)) === undefined,
    {
      timeoutMs,
    },
  );
}

export async function backups(client: KubeClient, ns: string): Promise<VolumeBackup[]> {
  return (await client.list<VolumeBackup>(VOLUME_BACKUP, { namespace: ns })).items;
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

/** events.k8s.io/v1 Events in `ns` about the named object, oldest first. */
export async function eventsFor(
  client: KubeClient,
  ns: string,
  kind: string,
  name: string,
): Promise<EventLike[]> {
  const list = await client.list<EventLike>(CoreTypes.Event, { namespace: ns });
  return list.items
    .filter((e) => e.regarding?.kind === kind && e.regarding?.name === name)
    .sort((a, b) =>
      String(a.metadata?.creationTimestamp).localeCompare(String(b.metadata?.creationTimestamp)),
    );
}

/** Waits for an Event with this reason about the object; returns it. */
export function waitForEvent(
  client: KubeClient,
  ns: string,
  kind: string,
  name: string,
  reason: string,
  timeoutMs = 30_000,
): Promise<EventLike> {
  return waitFor(
    `a ${reason} Event on ${kind} ${name}`,
    async () => (await eventsFor(client, ns, kind, name)).find((e) => e.reason === reason),
    { timeoutMs },
  );
}

export const isComplete = (job: V1Job) =>
  job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') ?? false;

export const isRunningAndReady = (m: Machine) => m.status?.phase === 'Running' && m.status.ready === true;

export type MachineSuite = OperatorSuite;

/**
 * What every Machine test file starts with: CRDs and free volumes, a fresh namespace, and an
 * in-process manager running the Machine, PodMachine and VolumeBackup controllers for it, as
 * registerControllers does.
 */
export async function startMachineSuite(
  prefix: string,
  freeVolumes: number,
  backupOptions: Partial<VolumeBackupOptions> = {},
): Promise<MachineSuite> {
  await prepareCluster(freeVolumes);
  const options = { ...OPERATOR_DEFAULTS, ...backupOptions };
  return startOperatorSuite(prefix, (m) => {
    registerMachineController(m);
    registerPodMachineController(m, options);
    registerMachineBackupController(m);
    registerVolumeBackupController(m, options);
  });
}

export async function stopMachineSuite(suite: MachineSuite | undefined): Promise<void> {
  if (!suite) return;
  await suite.manager.stop();
  // Our finalizer would otherwise hold the namespace's deletion forever.
  await releaseMachines(suite.client, suite.ns);
  await stopOperatorSuite(suite);
}

interface QuotaLike extends KubeObject {
  status?: { hard?: Record<string, string>; used?: Record<string, string> };
}

/**
 * Creates a ResourceQuota and waits until kube-controller-manager has computed its usage: until
 * then, a create racing the API server's quota cache may still be admitted.
 */
export async function createQuota(
  client: KubeClient,
  ns: string,
  name: string,
  hard: Record<string, string>,
): Promise<void> {
  await client.create(CoreTypes.ResourceQuota, {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name, namespace: ns },
    spec: { hard },
  });
  await waitFor(`ResourceQuota ${name} to be computed`, async () => {
    const quota = await client.get<QuotaLike>(CoreTypes.ResourceQuota, ns, name);
    return Object.keys(hard).every(
      (k) => quota.status?.hard?.[k] !== undefined && quota.status.used?.[k] !== undefined,
    );
  });
  // The API server's quota cache follows the status update through a watch; give it a moment.
  await new Promise((r) => setTimeout(r, 500));
}
