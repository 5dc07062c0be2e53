import type { V1ObjectMeta, V1OwnerReference } from '@kubernetes/client-node';

/** Any Kubernetes object: typed kinds (V1Pod, BasicDeployment, ...) all fit this shape. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
}

/**
 * An object of a kind known only at run time (a provider of a contract), read by field path, as
 * client-go's unstructured.Unstructured is.
 */
export interface Unstructured extends KubeObject {
  [field: string]: unknown;
}

/** Any object, seen as unstructured: read by field path from here on. */
export function toUnstructured(obj: KubeObject): Unstructured {
  return { ...obj };
}

export interface ObjectList<T extends KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

export function nameOf(obj: KubeObject): string {
  return obj.metadata?.name ?? '';
}

export function namespaceOf(obj: KubeObject): string {
  return obj.metadata?.namespace ?? '';
}

export function uidOf(obj: KubeObject): string {
  return obj.metadata?.uid ?? '';
}

/** The cache key client-go uses: "namespace/name", or "name" for cluster-scoped objects. */
export function objectKey(obj: KubeObject): string {
  const ns = namespaceOf(obj);
  return ns ? `${ns}/${nameOf(obj)}` : nameOf(obj);
}

export function isBeingDeleted(obj: KubeObject): boolean {
  return obj.metadata?.deletionTimestamp != null;
}

export function controllerRefOf(obj: KubeObject): V1OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((ref) => ref.controller === true);
}
