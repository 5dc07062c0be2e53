// The object and everything under it, read through an ObjectSource.
import { REVISION_ANNOTATION } from '../../apis/index.ts';
import type { Unstructured } from '../../runtime/client/object.ts';
import type { ResourceType } from '../../runtime/client/resource.ts';
import { type Timestamp, toMillis } from '../../runtime/time.ts';
import { field, listField, nameOf, ownedBy, stringField } from './fields.ts';
import { rootResource } from './kinds.ts';
import { CORE, type ObjectSource } from './source.ts';
import { type Summary, summarize } from './summary.ts';

export interface TreeNode extends Summary {
  kind: string;
  name: string;
  namespace: string;
  /** RFC 3339 creation time. */
  created: string;
  /** The revision of a BasicDeployment or BasicReplicaSet (annotation apps.basicoperator.dev/revision). */
  revision: string | undefined;
  /** A node that should exist and does not (a provider object a Machine names). */
  missing: boolean;
  children: TreeNode[];
  /** The object itself, for the why-walk; not rendered. */
  object: Unstructured | undefined;
}

/** Wire objects carry RFC 3339 strings where client-node's types say Date: either is read. */
function rfc3339(time: Timestamp | undefined): string {
  const millis = toMillis(time);
  return millis === undefined ? '' : new Date(millis).toISOString().replace('.000Z', 'Z');
}

export function nodeOf(kind: string, obj: Unstructured, children: TreeNode[] = []): TreeNode {
  const revision = obj.metadata?.annotations?.[REVISION_ANNOTATION];
  return {
    kind,
    name: nameOf(obj),
    namespace: obj.metadata?.namespace ?? '',
    created: rfc3339(obj.metadata?.creationTimestamp),
    revision,
    missing: false,
    ...summarize(kind, obj),
    children,
    object: obj,
  };
}

function missingNode(kind: string, name: string, namespace: string, message: string): TreeNode {
  return {
    kind,
    name,
    namespace,
    created: '',
    revision: undefined,
    missing: true,
    ready: false,
    status: 'NotFound',
    reason: 'NotFound',
    message,
    children: [],
    object: undefined,
  };
}

const byName = (a: TreeNode, b: TreeNode) => a.name.localeCompare(b.name);

/** A revision as the controller reads it, an int64 (strconv.ParseInt); 0 when absent or not one. */
function revisionValue(node: TreeNode): bigint {
  if (node.revision === undefined || !/^[+-]?[0-9]+$/.test(node.revision)) return 0n;
  const revision = BigInt(node.revision);
  return BigInt.asIntN(64, revision) === revision ? revision : 0n;
}

/** Newest revision first (exactly, beyond 2^53), then by name. */
const byRevision = (a: TreeNode, b: TreeNode) => {
  const ra = revisionValue(a);
  const rb = revisionValue(b);
  return ra === rb ? byName(a, b) : ra < rb ? 1 : -1;
};

async function owned(
  source: ObjectSource,
  type: ResourceType<Unstructured>,
  owner: Unstructured,
  labelSelector?: string,
): Promise<Unstructured[]> {
  const all = await source.list(type, owner.metadata?.namespace, labelSelector);
  return all.filter((child) => ownedBy(child, owner));
}

/** The tree under `obj`, a `kind` of object the plugin starts from (or reaches). */
export async function buildTree(source: ObjectSource, kind: string, obj: Unstructured): Promise<TreeNode> {
  switch (kind) {
    case 'BasicDeployment': {
      const sets = await owned(source, rootResource('BasicReplicaSet'), obj);
      const children = await Promise.all(sets.map((s) => buildTree(source, 'BasicReplicaSet', s)));
      return nodeOf(kind, obj, children.sort(byRevision));
    }
    case 'BasicReplicaSet': {
      // Only the set's pods are listed, not the namespace's: a set's pods match its selector.
      const pods = await owned(source, CORE.Pod, obj, matchLabelsSelector(obj));
      return nodeOf(kind, obj, pods.map((p) => nodeOf('Pod', p)).sort(byName));
    }
    case 'Machine':
      return machineTree(source, obj);
    case 'PodMachine':
      return nodeOf(kind, obj, await leaves(source, obj, [CORE.PersistentVolumeClaim, CORE.Pod]));
    case 'VolumeBackup':
      return nodeOf(kind, obj, await leaves(source, obj, [CORE.PersistentVolumeClaim, CORE.Job]));
    case 'StatefulSet': {
      const pods = await owned(source, CORE.Pod, obj, matchLabelsSelector(obj));
      return nodeOf(kind, obj, pods.map((p) => nodeOf('Pod', p)).sort(byName));
    }
    default:
      return nodeOf(kind, obj, await providerChildren(source, obj));
  }
}

async function leaves(
  source: ObjectSource,
  owner: Unstructured,
  types: ResourceType<Unstructured>[],
): Promise<TreeNode[]> {
  const nodes: TreeNode[] = [];
  for (const type of types) {
    const children = await owned(source, type, owner);
    nodes.push(...children.map((c) => nodeOf(type.kind, c)).sort(byName));
  }
  return nodes;
}

/** spec.selector.matchLabels as a label selector (its matchExpressions, if any, are left to the owner filter). */
export function matchLabelsSelector(set: Unstructured): string | undefined {
  const labels = field(set, 'spec.selector.matchLabels');
  if (typeof labels !== 'object' || labels === null) return undefined;
  const terms = Object.entries(labels).filter((e): e is [string, string] => typeof e[1] === 'string');
  return terms.length > 0 ? terms.map(([k, v]) => `${k}=${v}`).join(',') : undefined;
}

/**
 * What any other provider has under it: its volumes, by the claims its status.volumes names
 * (contract v1), then the StatefulSets (with their pods) and pods it owns, found by ownerReferences
 * as kube-controller-manager's garbage collector finds them.
 */
async function providerChildren(source: ObjectSource, provider: Unstructured): Promise<TreeNode[]> {
  const statefulSets = await owned(source, CORE.StatefulSet, provider);
  const sets = await Promise.all(statefulSets.map((s) => buildTree(source, 'StatefulSet', s)));
  return [
    ...(await providerClaims(source, provider)),
    ...sets.sort(byName),
    ...(await leaves(source, provider, [CORE.Pod])),
  ];
}

/** Any provider's volumes, by the claims its status.volumes names (contract v1). */
async function providerClaims(source: ObjectSource, provider: Unstructured): Promise<TreeNode[]> {
  const namespace = provider.metadata?.namespace ?? '';
  const nodes: TreeNode[] = [];
  for (const volume of listField(provider, 'status.volumes')) {
    const claimName = stringField(volume, 'claimName');
    if (!claimName) continue;
    const claim = await source.get(CORE.PersistentVolumeClaim, namespace, claimName);
    nodes.push(
      claim
        ? nodeOf('PersistentVolumeClaim', claim)
        : missingNode('PersistentVolumeClaim', claimName, namespace, 'named in status.volumes, not found'),
    );
  }
  return nodes;
}

async function machineTree(source: ObjectSource, machine: Unstructured): Promise<TreeNode> {
  const namespace = machine.metadata?.namespace ?? '';
  const children: TreeNode[] = [];
  const ref = providerRef(machine);
  if (ref) {
    const type = await source.resolve(ref.apiVersion, ref.kind);
    const provider = type ? await source.get(type, namespace, ref.name) : undefined;
    if (provider) children.push(await buildTree(source, ref.kind, provider));
    else {
      const why = type ? 'not found' : `no resource serves ${ref.kind} in ${ref.apiVersion}`;
      children.push(missingNode(ref.kind, ref.name, namespace, why));
    }
  }
  const uid = machine.metadata?.uid;
  const backups = (await source.list(rootResource('VolumeBackup'), namespace)).filter(
    (b) => uid !== undefined && stringField(b, 'spec.machineUID') === uid,
  );
  for (const b of backups) children.push(await buildTree(source, 'VolumeBackup', b));
  return nodeOf('Machine', machine, children);
}

export interface ProviderRef {
  apiVersion: string;
  kind: string;
  name: string;
}

/** The provider object a Machine uses: status.infrastructureRef, else spec.infrastructureRef. */
export function providerRef(machine: Unstructured): ProviderRef | undefined {
  for (const path of ['status.infrastructureRef', 'spec.infrastructureRef']) {
    const apiVersion = stringField(machine, `${path}.apiVersion`);
    const kind = stringField(machine, `${path}.kind`);
    const name = stringField(machine, `${path}.name`);
    if (apiVersion && kind && name) return { apiVersion, kind, name };
  }
  return undefined;
}
