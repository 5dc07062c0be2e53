import { controllerRefOf, type KubeObject } from '../../../runtime/client/object.ts';

/** The kind and group of the sets that may control pods here. */
export interface SetKind {
  kind: string;
  group: string;
}

/**
 * The "namespace/name" key of the set controlling `pod` (upstream resolveControllerRef): only when
 * the controller reference names a set of our kind and group that exists under that name with that
 * uid. A pod of a deleted set must not count towards the expectations of a namesake created later.
 */
export function controllingSetKey(
  pod: KubeObject,
  kind: SetKind,
  uidOfSet: (namespace: string, name: string) => string | undefined,
): string | undefined {
  const ref = controllerRefOf(pod);
  if (!ref || ref.kind !== kind.kind || ref.apiVersion?.split('/')[0] !== kind.group) return undefined;
  const namespace = pod.metadata?.namespace ?? '';
  if (uidOfSet(namespace, ref.name) !== ref.uid) return undefined;
  return `${namespace}/${ref.name}`;
}
