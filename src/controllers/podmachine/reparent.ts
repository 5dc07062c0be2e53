// Taking over the children of a Machine from a version of the operator before PodMachines: there the
// Machine controller created the claims, pod and restore Jobs itself, under the names a PodMachine of
// the Machine's name now gives them. When the Machine controller then realizes that Machine as a
// PodMachine (controlled by the Machine), the PodMachine finds its children already there, controlled
// by its own controller owner. It re-parents them (its own controller reference replaces the
// Machine's) instead of creating them again or calling them foreign, so an operator upgrade neither
// recreates nor orphans a running Machine's pod and claims.
import { CREATED_FOR_ANNOTATION, POD_MACHINE, type PodMachine } from '../../apis/index.ts';
import type { KubeClient } from '../../runtime/client/kube-client.ts';
import { controllerRefOf, type KubeObject } from '../../runtime/client/object.ts';
import type { ResourceType } from '../../runtime/client/resource.ts';
import {
  absentListGuard,
  type JsonPatch,
  patchWithGuards,
  pointerSegment,
  uidGuard,
} from '../../runtime/write/guarded-patch.ts';
import { controllerReference } from '../../runtime/write/owner-refs.ts';
import { POD_MACHINE_LABEL, podMachineLabelValue } from './names.ts';

/**
 * Whether `obj` is controlled by the PodMachine's own controller owner (matched by uid), and that
 * owner is the Machine that created the PodMachine (CREATED_FOR_ANNOTATION): a PodMachine some other
 * way came under a Machine (adopted through a grant) takes nothing over.
 */
export function isInherited(obj: KubeObject, podMachine: PodMachine): boolean {
  const owner = controllerRefOf(podMachine)?.uid;
  return (
    owner !== undefined &&
    podMachine.metadata.annotations?.[CREATED_FOR_ANNOTATION] === owner &&
    controllerRefOf(obj)?.uid === owner
  );
}

/**
 * The patch that hands `obj` over from the PodMachine's controller owner to the PodMachine: the
 * controller reference is replaced by the PodMachine's (other owner references stay), and the
 * PodMachine's label is added, so the object looks like one the PodMachine created. Undefined when
 * `obj` is not controlled by that owner (already re-parented, or someone else's). The whole list is
 * tested, so the patch fails if anyone changed the owner references since `obj` was read.
 */
export function reparentPatch(obj: KubeObject, podMachine: PodMachine): JsonPatch | undefined {
  if (!isInherited(obj, podMachine)) return undefined;
  const current = obj.metadata?.ownerReferences ?? [];
  const index = current.findIndex((ref) => ref.controller === true);
  const label = podMachineLabelValue(podMachine);
  const labels = obj.metadata?.labels;
  const labelOps: JsonPatch =
    labels === undefined
      ? [{ op: 'add', path: '/metadata/labels', value: { [POD_MACHINE_LABEL]: label } }]
      : labels[POD_MACHINE_LABEL] === label
        ? []
        : [{ op: 'add', path: `/metadata/labels/${pointerSegment(POD_MACHINE_LABEL)}`, value: label }];
  return [
    // A labels map added whole would replace one added meanwhile: then the resourceVersion guards it.
    ...(labels === undefined ? absentListGuard(obj) : uidGuard(obj)),
    { op: 'test', path: '/metadata/ownerReferences', value: current.map((ref) => ({ ...ref })) },
    {
      op: 'replace',
      path: `/metadata/ownerReferences/${index}`,
      value: controllerReference(podMachine, POD_MACHINE),
    },
    ...labelOps,
  ];
}

/**
 * Re-parents `obj` (see reparentPatch); returns the object as written, or as found when there was
 * nothing to do. A lost race is retried on a fresh copy, which the patch is rebuilt from: a copy
 * someone else took meanwhile is returned as it is, for the caller to see it is not its own.
 */
export function reparent<T extends KubeObject>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  podMachine: PodMachine,
  signal: AbortSignal,
): Promise<T> {
  return patchWithGuards(client, type, obj, (current) => reparentPatch(current, podMachine), { signal });
}
