/** How to reach one kind of object over the REST API. */
export interface ResourceType {
  readonly group: string; // '' for the core group
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
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
  Pod: { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true },
  PersistentVolumeClaim: {
    group: '',
    version: 'v1',
    kind: 'PersistentVolumeClaim',
    plural: 'persistentvolumeclaims',
    namespaced: true,
  },
  Namespace: { group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false },
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
  Job: { group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', namespaced: true },
  Lease: { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', namespaced: true },
  Event: { group: 'events.k8s.io', version: 'v1', kind: 'Event', plural: 'events', namespaced: true },
  Deployment: { group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', namespaced: true },
  ReplicaSet: { group: 'apps', version: 'v1', kind: 'ReplicaSet', plural: 'replicasets', namespaced: true },
} as const satisfies Record<string, ResourceType>;
