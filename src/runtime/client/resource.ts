import type {
  V1CustomResourceDefinition,
  V1Deployment,
  V1Job,
  V1Namespace,
  V1PersistentVolumeClaim,
  V1Pod,
  V1ReplicaSet,
} from '@kubernetes/client-node';
import type { KubeObject } from './object.ts';

declare const objectType: unique symbol;

/**
 * How to reach one kind of object over the REST API. `T` is the type of its objects: informers,
 * reads and writes infer it from here, so `informerFor<Machine>(CoreTypes.Pod)` does not compile.
 */
export interface ResourceType<T extends KubeObject = KubeObject> {
  readonly group: string; // '' for the core group
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** Type-level only: never set at run time. */
  readonly [objectType]?: T;
}

/** Declares `resource` as the resource of objects of type T: `resourceOf<Machine>()({...})`. */
export function resourceOf<T extends KubeObject>() {
  return <R extends ResourceType>(resource: R): R & ResourceType<T> => resource as R & ResourceType<T>;
}

export function apiVersionOf(type: ResourceType): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}

/** A stable name for a resource type, used to share one informer per type. */
export function resourceId(type: ResourceType): string {
  return `${type.plural}.${type.version}.${type.group || 'core'}`;
}

export function collectionPath(type: ResourceType, namespace?: string): string {
  const base = type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
  if (type.namespaced && namespace)
    return `${base}/namespaces/${encodeURIComponent(namespace)}/${type.plural}`;
  return `${base}/${type.plural}`;
}

export function objectPath(
  type: ResourceType,
  namespace: string | undefined,
  name: string,
  subresource?: string,
): string {
  const path = `${collectionPath(type, namespace)}/${encodeURIComponent(name)}`;
  return subresource ? `${path}/${subresource}` : path;
}

export const CoreTypes = {
  Pod: resourceOf<V1Pod>()({ group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true }),
  PersistentVolumeClaim: resourceOf<V1PersistentVolumeClaim>()({
    group: '',
    version: 'v1',
    kind: 'PersistentVolumeClaim',
    plural: 'persistentvolumeclaims',
    namespaced: true,
  }),
  Namespace: resourceOf<V1Namespace>()({
    group: '',
    version: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
  }),
  ConfigMap: { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true },
  ServiceAccount: {
    group: '',
    version: 'v1',
    kind: 'ServiceAccount',
    plural: 'serviceaccounts',
    namespaced: true,
  },
  ResourceQuota: {
    group: '',
    version: 'v1',
    kind: 'ResourceQuota',
    plural: 'resourcequotas',
    namespaced: true,
  },
  CustomResourceDefinition: resourceOf<V1CustomResourceDefinition>()({
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
  }),
  Job: resourceOf<V1Job>()({ group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', namespaced: true }),
  Lease: { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', namespaced: true },
  Event: { group: 'events.k8s.io', version: 'v1', kind: 'Event', plural: 'events', namespaced: true },
  Deployment: resourceOf<V1Deployment>()({
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    plural: 'deployments',
    namespaced: true,
  }),
  ReplicaSet: resourceOf<V1ReplicaSet>()({
    group: 'apps',
    version: 'v1',
    kind: 'ReplicaSet',
    plural: 'replicasets',
    namespaced: true,
  }),
} as const satisfies Record<string, ResourceType>;
