import type { V1LabelSelector, V1ObjectMeta, V1Pod } from '@kubernetes/client-node';
import {
  BASIC_DEPLOYMENT,
  BASIC_REPLICA_SET,
  POD_TEMPLATE_HASH_LABEL,
  REVISION_ANNOTATION,
} from '../../src/apis/index.ts';
import { isConflict, isNotFound } from '../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../src/runtime/client/kube-client.ts';
import { CoreTypes, type ResourceType, resourceOf } from '../../src/runtime/client/resource.ts';
import {
  NEVER_READY_ANNOTATION,
  RELEASE_LABEL,
  RELEASED_VALUE,
  SIDE_LABEL,
  type WorkloadModel,
} from './model.ts';

/** The fields of a Deployment or BasicDeployment condition the harness reads (wire JSON). */
export interface WireCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  /** apps/v1 only. */
  lastUpdateTime?: string;
}

/** A Deployment or a BasicDeployment, as JSON: the shape both kinds share. */
export interface WorkloadObject {
  apiVersion: string;
  kind: string;
  metadata: V1ObjectMeta;
  spec: {
    replicas?: number;
    selector: V1LabelSelector;
    template: PodTemplateObject;
    strategy?: Record<string, unknown>;
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
    /** BasicDeployment only: where its progress deadline counts from. */
    lastProgressTime?: string;
    conditions?: WireCondition[];
  };
}

export interface PodTemplateObject {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { containers: Array<{ name: string; image?: string }> } & Record<string, unknown>;
}

/** A ReplicaSet or a BasicReplicaSet, as JSON. */
export interface SetObject {
  apiVersion?: string;
  kind?: string;
  metadata: V1ObjectMeta;
  spec: { replicas?: number; selector: V1LabelSelector; template: PodTemplateObject };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
  };
}

export type SideId = 'kcm' | 'bo';

/** One side of the comparison: the kinds, names and label keys its controller uses. */
export interface Side {
  id: SideId;
  title: string;
  workloadType: ResourceType<WorkloadObject>;
  setType: ResourceType<SetObject>;
  setKind: string;
  hashLabel: string;
  revisionAnnotation: string;
  /** Name of the workload object. */
  name: string;
  /** Its SIDE_LABEL value: selects exactly this side's pods. */
  instance: string;
}

/** Both sides' kinds are read through the fields they share (WorkloadObject, SetObject). */
const asWorkload = resourceOf<WorkloadObject>();
const asSet = resourceOf<SetObject>();

export function makeSides(prefix: string): [Side, Side] {
  return [
    {
      id: 'kcm',
      title: 'apps/v1 Deployment (kube-controller-manager)',
      workloadType: asWorkload(CoreTypes.Deployment),
      setType: asSet(CoreTypes.ReplicaSet),
      setKind: 'ReplicaSet',
      hashLabel: 'pod-template-hash',
      revisionAnnotation: 'deployment.kubernetes.io/revision',
      name: `${prefix}-kcm`,
      instance: `${prefix}-kcm`,
    },
    {
      id: 'bo',
      title: 'BasicDeployment (basic-operator)',
      workloadType: asWorkload(BASIC_DEPLOYMENT),
      setType: asSet(BASIC_REPLICA_SET),
      setKind: BASIC_REPLICA_SET.kind,
      hashLabel: POD_TEMPLATE_HASH_LABEL,
      revisionAnnotation: REVISION_ANNOTATION,
      name: `${prefix}-bo`,
      instance: `${prefix}-bo`,
    },
  ];
}

export function sideSelector(side: Side): string {
  return `${SIDE_LABEL}=${side.instance}`;
}

/** The one mapping from the model to a side's object spec. */
export function workloadSpec(side: Side, model: WorkloadModel): WorkloadObject['spec'] {
  const selectorLabels = { [SIDE_LABEL]: side.instance, ...model.selectorLabels };
  const strategy: Record<string, unknown> =
    model.strategy.type === 'Recreate'
      ? { type: 'Recreate' }
      : {
          type: 'RollingUpdate',
          rollingUpdate: { maxSurge: model.strategy.maxSurge, maxUnavailable: model.strategy.maxUnavailable },
        };
  return {
    replicas: model.replicas,
    selector: { matchLabels: selectorLabels },
    template: {
      metadata: {
        labels: { ...selectorLabels, ...model.template.extraLabels },
        ...(model.template.neverReady ? { annotations: { [NEVER_READY_ANNOTATION]: 'true' } } : {}),
      },
      spec: { containers: [{ name: 'app', image: model.template.image }] },
    },
    strategy,
    minReadySeconds: model.minReadySeconds,
    revisionHistoryLimit: model.revisionHistoryLimit,
    progressDeadlineSeconds: model.progressDeadlineSeconds,
    paused: model.paused,
  };
}

export function workloadObject(side: Side, namespace: string, model: WorkloadModel): WorkloadObject {
  return {
    apiVersion:
      side.workloadType.group === ''
        ? side.workloadType.version
        : `${side.workloadType.group}/${side.workloadType.version}`,
    kind: side.workloadType.kind,
    metadata: { name: side.name, namespace },
    spec: workloadSpec(side, model),
  };
}

/** Replaces the side's spec with the model's (GET + PUT, retried on conflicts with status writes). */
export async function applyModel(
  client: KubeClient,
  side: Side,
  namespace: string,
  model: WorkloadModel,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const current = await client.get<WorkloadObject>(side.workloadType, namespace, side.name);
    current.spec = workloadSpec(side, model);
    try {
      await client.update(side.workloadType, current);
      return;
    } catch (err) {
      if (!isConflict(err) || attempt >= 10) throw err;
    }
  }
}

export async function listSets(client: KubeClient, side: Side, namespace: string): Promise<SetObject[]> {
  const all = await client.list<SetObject>(side.setType, { namespace });
  return all.items.filter((s) =>
    s.metadata.ownerReferences?.some((r) => r.controller && r.name === side.name),
  );
}

export async function listPods(client: KubeClient, side: Side, namespace: string): Promise<V1Pod[]> {
  return (await client.list<V1Pod>(CoreTypes.Pod, { namespace, labelSelector: sideSelector(side) })).items;
}

export const ORPHAN_PREFIX = 'orphan-';

export const isLive = (pod: V1Pod) =>
  !pod.metadata?.deletionTimestamp && pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';

export const isReady = (pod: V1Pod) =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

export const controllerOf = (obj: { metadata?: V1ObjectMeta }) =>
  obj.metadata?.ownerReferences?.find((r) => r.controller);

/**
 * Live pods owned by a set of the side, by creation time then name. With `among` (the names a burst
 * saw before its first operation), only those: a replacement made in the same second as the pod it
 * replaces sorts by name, so without it a burst's second "pod #0" could be a replacement on one side
 * and an original on the other.
 */
export async function ownedLivePods(
  client: KubeClient,
  side: Side,
  namespace: string,
  among?: ReadonlySet<string>,
): Promise<V1Pod[]> {
  return (await listPods(client, side, namespace))
    .filter((p) => isLive(p) && controllerOf(p)?.kind === side.setKind)
    .filter((p) => among === undefined || among.has(p.metadata?.name ?? ''))
    .sort((a, b) => {
      const ta = String(a.metadata?.creationTimestamp ?? '');
      const tb = String(b.metadata?.creationTimestamp ?? '');
      return ta === tb
        ? (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '')
        : ta.localeCompare(tb);
    });
}

/**
 * Takes the side's pod `index` (as deletePod picks it) out of its set: a selector label changed
 * (RELEASE_LABEL), the instance label kept, so the harness still sees it as a live pod without a
 * controller once its set has released it (and made a replacement).
 */
export async function relabelPod(
  client: KubeClient,
  side: Side,
  namespace: string,
  index: number,
  among?: ReadonlySet<string>,
): Promise<string> {
  const pods = await ownedLivePods(client, side, namespace, among);
  if (pods.length === 0) return 'no live pod to relabel';
  const pod = pods[index % pods.length]!;
  await client.patch(CoreTypes.Pod, {
    namespace,
    name: pod.metadata!.name!,
    patchType: 'merge',
    body: { metadata: { labels: { [RELEASE_LABEL]: RELEASED_VALUE } } },
  });
  return `relabelled ${pod.metadata?.name}`;
}

/**
 * `kubectl delete --cascade=orphan` then a create of the same object: the delete (propagation
 * Orphan), a wait until the object is gone (the garbage collector has taken its ownerReferences off
 * the sets by then, as kubectl's default --wait sees it), and the create from the model.
 */
export async function deleteOrphanAndRecreate(
  client: KubeClient,
  side: Side,
  namespace: string,
  model: WorkloadModel,
): Promise<string> {
  const started = Date.now();
  await client.delete(side.workloadType, namespace, side.name, { propagationPolicy: 'Orphan' });
  for (;;) {
    const gone = await client.get<WorkloadObject>(side.workloadType, namespace, side.name).then(
      () => false,
      (err: unknown) => {
        if (isNotFound(err)) return true;
        throw err;
      },
    );
    if (gone) break;
    if (Date.now() - started > 60_000) throw new Error(`${side.name} still exists 60 s after its delete`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const orphaned = (await client.list<SetObject>(side.setType, { namespace })).items.filter(
    (s) => s.metadata.labels?.[SIDE_LABEL] === side.instance && !controllerOf(s),
  ).length;
  await client.create(side.workloadType, workloadObject(side, namespace, model));
  return `re-created after ${((Date.now() - started) / 1000).toFixed(1)}s, ${orphaned} set(s) orphaned`;
}

/** The side's pod `index` (modulo the count) among live pods owned by a set, by creation time then name. */
export async function deletePod(
  client: KubeClient,
  side: Side,
  namespace: string,
  index: number,
  among?: ReadonlySet<string>,
): Promise<string> {
  const pods = await ownedLivePods(client, side, namespace, among);
  if (pods.length === 0) return 'no live pod to delete';
  const victim = pods[index % pods.length]!;
  await client.delete(CoreTypes.Pod, namespace, victim.metadata!.name!);
  return `deleted ${victim.metadata?.name}`;
}

const revisionOf = (side: Side, set: SetObject) =>
  Number(set.metadata.annotations?.[side.revisionAnnotation] ?? 0);

/**
 * A hand-made pod with the template's labels and no owner. With `withHash` it also carries the
 * pod-template-hash of the newest set, so it matches that set's selector too (apps/v1 adopts it).
 */
export async function createOrphan(
  client: KubeClient,
  side: Side,
  namespace: string,
  model: WorkloadModel,
  withHash: boolean,
  serial: string,
): Promise<string> {
  const template = workloadSpec(side, model).template;
  const labels = { ...template.metadata?.labels };
  // A copy of the template's pod, annotations included (never-ready too): whether it or a pod of the
  // set is deleted as surplus depends on its state at that instant (apps/v1 deletes an unscheduled pod
  // first), which differs between the sides by timing alone; a like pod keeps the counts comparable.
  const annotations = { ...template.metadata?.annotations };
  if (withHash) {
    const sets = await listSets(client, side, namespace);
    const newest = sets.sort((a, b) => revisionOf(side, b) - revisionOf(side, a))[0];
    const hash = newest?.metadata.labels?.[side.hashLabel];
    if (hash) labels[side.hashLabel] = hash;
  }
  const name = `${ORPHAN_PREFIX}${side.instance}-${serial}`;
  await client.create<V1Pod>(CoreTypes.Pod, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels, annotations },
    spec: { containers: [{ name: 'app', image: model.template.image }] },
  });
  return `created ${name}`;
}

export async function scaleSubresource(
  client: KubeClient,
  side: Side,
  namespace: string,
  replicas: number,
): Promise<void> {
  await client.patch(side.workloadType, {
    namespace,
    name: side.name,
    patchType: 'merge',
    body: { spec: { replicas } },
    subresource: 'scale',
  });
}
