import type { TestContext } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import type { V1LabelSelector, V1ObjectMeta, V1Pod } from '@kubernetes/client-node';
import { testClient } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  BASIC_DEPLOYMENT,
  BASIC_REPLICA_SET,
  POD_TEMPLATE_HASH_LABEL,
  REVISION_ANNOTATION,
} from '../../../src/apis/index.ts';
import { registerControllers } from '../../../src/controllers/index.ts';
import { isConflict } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import {
  CoreTypes,
  collectionPath,
  objectPath,
  type ResourceType,
  resourceOf,
} from '../../../src/runtime/client/resource.ts';
import { OPERATOR_DEFAULTS } from '../../support/operator-options.ts';
import { ObjectWatcher } from '../../support/pod-watch.ts';
import { type OperatorSuite, startOperatorSuite, stopOperatorSuite } from '../../support/suite.ts';

/**
 * Kubernetes' own e2e cases (test/e2e/apps/deployment.go and replica_set.go of v1.36.3), written once
 * against this adapter and run for both kinds: apps/v1 (kube-controller-manager of the local cluster)
 * and apps.basicoperator.dev/v1alpha1 (our controllers, in this process). Objects are read as wire
 * JSON through the fields both kinds share.
 */

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    containers: Array<{ name: string; image?: string } & Record<string, unknown>>;
    terminationGracePeriodSeconds?: number;
  } & Record<string, unknown>;
}

export interface Workload {
  apiVersion: string;
  kind: string;
  metadata: V1ObjectMeta;
  spec: {
    replicas?: number;
    selector: V1LabelSelector;
    template: PodTemplate;
    strategy?: {
      type?: string;
      rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string };
    };
    minReadySeconds?: number;
    revisionHistoryLimit?: number;
    progressDeadlineSeconds?: number;
    paused?: boolean;
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    unavailableReplicas?: number;
    terminatingReplicas?: number;
    conditions?: Condition[];
  };
}

export interface ReplicaSetObject {
  apiVersion: string;
  kind: string;
  metadata: V1ObjectMeta;
  spec: { replicas?: number; selector: V1LabelSelector; template: PodTemplate; minReadySeconds?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    terminatingReplicas?: number;
    conditions?: Condition[];
  };
}

interface Scale {
  apiVersion?: string;
  kind?: string;
  metadata: V1ObjectMeta;
  spec: { replicas?: number };
  status?: { replicas?: number; selector?: string };
}

export type KindId = 'apps/v1' | 'basic';

/** One kind's names, in one namespace of its own. */
export interface Kind {
  id: KindId;
  /** "Deployment" or "BasicDeployment": the subtest's name. */
  title: string;
  client: KubeClient;
  ns: string;
  deployments: ResourceType<Workload>;
  replicaSets: ResourceType<ReplicaSetObject>;
  deploymentApiVersion: string;
  deploymentKind: string;
  replicaSetKind: string;
  hashLabel: string;
  revisionAnnotation: string;
}

const asWorkload = resourceOf<Workload>();
const asReplicaSet = resourceOf<ReplicaSetObject>();

function kindOf(id: KindId, client: KubeClient, ns: string, workload: 'Deployment' | 'ReplicaSet'): Kind {
  const apps = id === 'apps/v1';
  const deploymentKind = apps ? 'Deployment' : BASIC_DEPLOYMENT.kind;
  const replicaSetKind = apps ? 'ReplicaSet' : BASIC_REPLICA_SET.kind;
  return {
    id,
    title: workload === 'Deployment' ? deploymentKind : replicaSetKind,
    client,
    ns,
    deployments: asWorkload(apps ? CoreTypes.Deployment : BASIC_DEPLOYMENT),
    replicaSets: asReplicaSet(apps ? CoreTypes.ReplicaSet : BASIC_REPLICA_SET),
    deploymentApiVersion: apps ? 'apps/v1' : BASIC_DEPLOYMENT.apiVersion,
    deploymentKind,
    replicaSetKind,
    hashLabel: apps ? 'pod-template-hash' : POD_TEMPLATE_HASH_LABEL,
    revisionAnnotation: apps ? 'deployment.kubernetes.io/revision' : REVISION_ANNOTATION,
  };
}

/** What one kind's run of a case gets: the kind, and its subtest (for assertions marked todo). */
export interface CaseContext {
  k: Kind;
  t: TestContext;
}

/**
 * One upstream case, run for both kinds at once in a namespace each (upstream gives every case a fresh
 * namespace): apps/v1's namespace is served by kube-controller-manager, ours by a manager in this
 * process that watches only its namespace. Each kind is a subtest, so a failure names the kind.
 */
export async function runForBothKinds(
  t: TestContext,
  workload: 'Deployment' | 'ReplicaSet',
  body: (c: CaseContext) => Promise<void>,
): Promise<void> {
  const client = await testClient();
  let suite: OperatorSuite | undefined;
  let appsNs: string | undefined;
  try {
    suite = await startOperatorSuite('ue-basic', (m) => registerControllers(m, OPERATOR_DEFAULTS));
    appsNs = await createNamespace(client, 'ue-apps');
    const kinds = [kindOf('apps/v1', client, appsNs, workload), kindOf('basic', client, suite.ns, workload)];
    await Promise.all(kinds.map((k) => t.test(`${k.title} (${k.ns})`, (sub) => body({ k, t: sub }))));
  } finally {
    await stopOperatorSuite(suite);
    if (appsNs) await deleteNamespace(client, appsNs);
  }
}

/**
 * An assertion that diverges for one kind: run as a subtest of its own, marked todo for that kind
 * (node:test reports it and does not fail the run). `divergences` says why, per kind.
 */
export async function check(
  c: CaseContext,
  name: string,
  divergences: Partial<Record<KindId, string>>,
  body: () => Promise<void> | void,
): Promise<void> {
  const todo = divergences[c.k.id];
  await c.t.test(name, todo ? { todo: `divergence: ${todo}` } : {}, async () => {
    await body();
  });
}

// ---- objects (upstream's e2edeployment.NewDeployment and newRS) ----

export function newDeployment(
  k: Kind,
  name: string,
  replicas: number,
  podLabels: Record<string, string>,
  containerName: string,
  image: string,
  strategyType: 'RollingUpdate' | 'Recreate',
): Workload {
  return {
    apiVersion: k.deploymentApiVersion,
    kind: k.deploymentKind,
    metadata: { name, namespace: k.ns, labels: { ...podLabels } },
    spec: {
      replicas,
      selector: { matchLabels: { ...podLabels } },
      strategy: { type: strategyType },
      template: {
        metadata: { labels: { ...podLabels } },
        spec: {
          terminationGracePeriodSeconds: 0,
          containers: [{ name: containerName, image, securityContext: {} }],
        },
      },
    },
  };
}

export function newRS(
  k: Kind,
  name: string,
  replicas: number,
  podLabels: Record<string, string>,
  containerName: string,
  image: string,
): ReplicaSetObject {
  return {
    apiVersion: k.deploymentApiVersion,
    kind: k.replicaSetKind,
    metadata: { name, namespace: k.ns, labels: { ...podLabels } },
    spec: {
      replicas,
      selector: { matchLabels: { ...podLabels } },
      template: {
        metadata: { labels: { ...podLabels } },
        spec: { terminationGracePeriodSeconds: 0, containers: [{ name: containerName, image }] },
      },
    },
  };
}

export const selectorString = (labels: Record<string, string>) =>
  Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');

// ---- reads ----

export const getDeployment = (k: Kind, name: string) => k.client.get(k.deployments, k.ns, name);
export const getReplicaSet = (k: Kind, name: string) => k.client.get(k.replicaSets, k.ns, name);

export async function listReplicaSets(k: Kind, labels: Record<string, string>): Promise<ReplicaSetObject[]> {
  return (await k.client.list(k.replicaSets, { namespace: k.ns, labelSelector: selectorString(labels) }))
    .items;
}

export async function listPods(k: Kind, labels: Record<string, string>): Promise<V1Pod[]> {
  return (await k.client.list(CoreTypes.Pod, { namespace: k.ns, labelSelector: selectorString(labels) }))
    .items;
}

export const controllerOf = (obj: { metadata?: V1ObjectMeta }) =>
  obj.metadata?.ownerReferences?.find((r) => r.controller === true);

const creationOrder = (a: ReplicaSetObject, b: ReplicaSetObject) =>
  String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')) ||
  (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');

/** deploymentutil.ListReplicaSets: the sets the selector matches whose controller is `d`. */
export async function ownedReplicaSets(k: Kind, d: Workload): Promise<ReplicaSetObject[]> {
  const labels = d.spec.selector.matchLabels ?? {};
  return (await listReplicaSets(k, labels))
    .filter((rs) => controllerOf(rs)?.uid === d.metadata.uid)
    .sort(creationOrder);
}

/** deploymentutil.EqualIgnoreHash. */
function equalIgnoreHash(k: Kind, a: PodTemplate, b: PodTemplate): boolean {
  const strip = (template: PodTemplate) => {
    const labels = { ...template.metadata?.labels };
    delete labels[k.hashLabel];
    return { ...template, metadata: { ...template.metadata, labels } };
  };
  return isDeepStrictEqual(strip(a), strip(b));
}

/** testutil.GetNewReplicaSet: the oldest owned set whose template is the deployment's. */
export async function newReplicaSetOf(k: Kind, d: Workload): Promise<ReplicaSetObject | undefined> {
  return (await ownedReplicaSets(k, d)).find((rs) => equalIgnoreHash(k, rs.spec.template, d.spec.template));
}

/** testutil.GetOldReplicaSets: all owned sets but the new one. */
export async function oldReplicaSetsOf(k: Kind, d: Workload): Promise<ReplicaSetObject[]> {
  const all = await ownedReplicaSets(k, d);
  const fresh = all.find((rs) => equalIgnoreHash(k, rs.spec.template, d.spec.template));
  return all.filter((rs) => rs.metadata.uid !== fresh?.metadata.uid);
}

// ---- writes ----

/** Upstream's Update...WithRetries: GET, mutate, PUT, again on a conflict (at most 20 times). */
async function updateWithRetries<T extends KubeObject>(
  k: Kind,
  type: ResourceType<T>,
  name: string,
  mutate: (obj: T) => void,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const obj = await k.client.get<T>(type, k.ns, name);
    mutate(obj);
    try {
      return await k.client.update(type, obj);
    } catch (err) {
      if (!isConflict(err) || attempt >= 20) throw err;
    }
  }
}

/** UpdateDeploymentWithRetries. */
export const updateDeployment = (k: Kind, name: string, mutate: (d: Workload) => void) =>
  updateWithRetries(k, k.deployments, name, mutate);

/** UpdateReplicaSetWithRetries. */
export const updateReplicaSet = (k: Kind, name: string, mutate: (rs: ReplicaSetObject) => void) =>
  updateWithRetries(k, k.replicaSets, name, mutate);

export const getScale = (k: Kind, type: ResourceType, name: string) =>
  k.client.request<Scale>('GET', objectPath(type, k.ns, name, 'scale'));

export const updateScale = (k: Kind, type: ResourceType, name: string, scale: Scale) =>
  k.client.request<Scale>('PUT', objectPath(type, k.ns, name, 'scale'), { body: scale });

/** DeleteCollection with a label selector. */
export async function deleteCollection(
  k: Kind,
  type: ResourceType,
  labelSelector: string,
  gracePeriodSeconds: number,
): Promise<void> {
  await k.client.request('DELETE', collectionPath(type, k.ns), {
    query: { labelSelector },
    body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds },
  });
}

// ---- waits (upstream's helpers; each names what it waits for) ----

const TIMEOUT_MS = 90_000;

/** e2edeployment.WaitForDeploymentComplete (deploymentutil.DeploymentComplete). */
export function waitForDeploymentComplete(k: Kind, d: Workload): Promise<Workload> {
  const want = d.spec.replicas ?? 1;
  return waitFor(
    `${k.deploymentKind} ${d.metadata.name} to complete with ${want} replicas`,
    async () => {
      const current = await getDeployment(k, d.metadata.name ?? '');
      const s = current.status;
      return s?.updatedReplicas === want &&
        s.replicas === want &&
        s.availableReplicas === want &&
        (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0)
        ? current
        : undefined;
    },
    { timeoutMs: TIMEOUT_MS },
  );
}

/**
 * testutil.WaitForDeploymentCompleteAndCheckRolling: as above, and on every poll once the new set
 * exists, the sets' spec.replicas stay within replicas + maxSurge and the deployment's available
 * replicas at or above replicas - maxUnavailable (int values only, as the cases use).
 */
export async function waitForDeploymentCompleteAndCheckRolling(k: Kind, d: Workload): Promise<Workload> {
  const want = d.spec.replicas ?? 1;
  const maxSurge = Number(d.spec.strategy?.rollingUpdate?.maxSurge ?? 0);
  const maxUnavailable = Number(d.spec.strategy?.rollingUpdate?.maxUnavailable ?? 0);
  let broken: string | undefined;
  const done = await waitFor(
    `${k.deploymentKind} ${d.metadata.name} to complete without breaking its rolling update bounds`,
    async () => {
      const current = await getDeployment(k, d.metadata.name ?? '');
      const fresh = await newReplicaSetOf(k, current);
      if (fresh) {
        const sets = await ownedReplicaSets(k, current);
        const created = sets.reduce((n, rs) => n + (rs.spec.replicas ?? 0), 0);
        const available = current.status?.availableReplicas ?? 0;
        if (created > want + maxSurge)
          broken = `total pods created: ${created}, more than ${want + maxSurge}`;
        else if (available < want - maxUnavailable)
          broken = `total pods available: ${available}, less than ${want - maxUnavailable}`;
        if (broken) return current; // fails at once below
      }
      const s = current.status;
      return s?.updatedReplicas === want &&
        s.replicas === want &&
        s.availableReplicas === want &&
        (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0)
        ? current
        : undefined;
    },
    { timeoutMs: TIMEOUT_MS },
  );
  if (broken) throw new Error(`${k.deploymentKind} ${d.metadata.name} broke its rolling update: ${broken}`);
  return done;
}

/** testutil.checkRevisionAndImage: undefined when it holds, else why not. */
export async function revisionAndImageProblem(
  k: Kind,
  name: string,
  revision: string,
  image: string,
): Promise<string | undefined> {
  const d = await getDeployment(k, name);
  const fresh = await newReplicaSetOf(k, d);
  if (!fresh) return 'no new replica set yet';
  if (fresh.spec.selector.matchLabels?.[k.hashLabel] === undefined)
    return `new set ${fresh.metadata.name} has no ${k.hashLabel} in its selector`;
  const dRevision = d.metadata.annotations?.[k.revisionAnnotation];
  if (dRevision !== revision) return `deployment revision ${dRevision}, want ${revision}`;
  const rsRevision = fresh.metadata.annotations?.[k.revisionAnnotation];
  if (rsRevision !== revision) return `new set revision ${rsRevision}, want ${revision}`;
  if (!d.spec.template.spec.containers.some((c) => c.image === image))
    return `deployment lacks image ${image}`;
  if (!fresh.spec.template.spec.containers.some((c) => c.image === image))
    return `new set lacks image ${image}`;
  return undefined;
}

/** e2edeployment.WaitForDeploymentRevisionAndImage. */
export async function waitForRevisionAndImage(k: Kind, name: string, revision: string, image: string) {
  let problem: string | undefined;
  await waitFor(
    `${k.deploymentKind} ${name} and its new set at revision ${revision} with image ${image}`,
    async () => {
      problem = await revisionAndImageProblem(k, name, revision, image);
      return problem === undefined;
    },
    { timeoutMs: TIMEOUT_MS },
  ).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}: ${problem}`);
  });
}

/** Waits until the deployment's revision annotation is its new set's (the deployment's is written after the set's). */
export function waitForRevisionSettled(k: Kind, name: string): Promise<string> {
  return waitFor(`${k.deploymentKind} ${name}'s revision to be its new set's`, async () => {
    const d = await getDeployment(k, name);
    const fresh = await newReplicaSetOf(k, d);
    const revision = fresh?.metadata.annotations?.[k.revisionAnnotation];
    return revision !== undefined && d.metadata.annotations?.[k.revisionAnnotation] === revision
      ? revision
      : undefined;
  });
}

/** testutil.WaitForObservedDeployment. */
export function waitForObservedDeployment(k: Kind, name: string, generation: number): Promise<Workload> {
  return waitFor(
    `${k.deploymentKind} ${name} to observe generation ${generation}`,
    async () => {
      const d = await getDeployment(k, name);
      return (d.status?.observedGeneration ?? 0) >= generation ? d : undefined;
    },
    { timeoutMs: TIMEOUT_MS },
  );
}

/** Polls a replica set until `ok` holds (upstream's waitForReplicaSet* helpers). */
export function waitForReplicaSet(
  k: Kind,
  name: string,
  what: string,
  ok: (rs: ReplicaSetObject) => boolean,
): Promise<ReplicaSetObject> {
  return waitFor(
    `${k.replicaSetKind} ${name}: ${what}`,
    async () => {
      const rs = await getReplicaSet(k, name);
      return ok(rs) ? rs : undefined;
    },
    { timeoutMs: TIMEOUT_MS },
  );
}

/** e2epod.VerifyPodsRunning: `count` live pods match, all Running (kwok: Running and Ready). */
export function waitForPodsRunning(k: Kind, labels: Record<string, string>, count: number): Promise<V1Pod[]> {
  return waitFor(
    `${count} running pods with ${selectorString(labels)} in ${k.ns}`,
    async () => {
      const pods = (await listPods(k, labels)).filter((p) => !p.metadata?.deletionTimestamp);
      return pods.length === count && pods.every((p) => p.status?.phase === 'Running') ? pods : undefined;
    },
    { timeoutMs: TIMEOUT_MS },
  );
}

/**
 * Every version of the objects of one type with a label, from a list and a watch started now:
 * upstream's watchtools.Until from an earlier resourceVersion, which sees each event once.
 */
export class History<T extends { metadata?: V1ObjectMeta }> {
  readonly seen: T[] = [];
  private readonly watcher: ObjectWatcher<T & { metadata?: V1ObjectMeta }>;

  constructor(k: Kind, type: ResourceType<T & { metadata?: V1ObjectMeta }>, labelSelector: string) {
    this.watcher = new ObjectWatcher(k.client, type, k.ns, labelSelector, (objects) => {
      this.seen.push(...objects.map((o) => structuredClone(o)));
    });
  }

  /** Waits until some version seen since `from` (an index into `seen`) satisfies `ok`. */
  waitSeen(what: string, ok: (obj: T) => boolean, from = 0, timeoutMs = TIMEOUT_MS): Promise<T> {
    return waitFor(what, () => this.seen.slice(from).find(ok), { timeoutMs });
  }

  stop(): Promise<void> {
    return this.watcher.stop();
  }
}

/**
 * The status endpoint steps of upstream's "should validate ... Status endpoints" cases, for either
 * workload: a PUT of /status with one more condition (StatusUpdate; metav1.Condition, our kind's
 * type, requires lastTransitionTime, reason and message, and apps/v1 takes them too), again on a
 * conflict, then a merge patch of /status with another (StatusPatched), each seen in `history`.
 */
export async function updateAndPatchStatusConditions<
  T extends { metadata?: V1ObjectMeta; status?: { conditions?: Condition[] } },
>(k: Kind, type: ResourceType<T>, name: string, history: History<T>): Promise<void> {
  const path = objectPath(type, k.ns, name, 'status');
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  for (let attempt = 1; ; attempt++) {
    const current = await k.client.get<T>(type, k.ns, name);
    current.status = {
      ...current.status,
      conditions: [
        ...(current.status?.conditions ?? []),
        {
          type: 'StatusUpdate',
          status: 'True',
          reason: 'E2E',
          message: 'Set from e2e test',
          lastTransitionTime: now,
        },
      ],
    };
    try {
      await k.client.request('PUT', path, { body: current });
      break;
    } catch (err) {
      if (!isConflict(err) || attempt >= 20) throw err;
    }
  }
  await history.waitSeen(`${name} with the StatusUpdate condition`, (v) =>
    (v.status?.conditions ?? []).some(
      (c) => c.type === 'StatusUpdate' && c.reason === 'E2E' && c.message === 'Set from e2e test',
    ),
  );
  await k.client.patch(type, {
    namespace: k.ns,
    name,
    patchType: 'merge',
    subresource: 'status',
    body: {
      status: {
        conditions: [
          {
            type: 'StatusPatched',
            status: 'True',
            reason: 'E2E',
            message: 'patched',
            lastTransitionTime: now,
          },
        ],
      },
    },
  });
  await history.waitSeen(`${name} with the StatusPatched condition`, (v) =>
    (v.status?.conditions ?? []).some((c) => c.type === 'StatusPatched'),
  );
}
