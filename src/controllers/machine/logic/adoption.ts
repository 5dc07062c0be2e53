// Whether a Machine may take over a provider object that has no controller, and the patch that does
// (pure). A name in spec.infrastructureRef is no proof that the object is the Machine's user's: the
// object must say which Machine may adopt it (ADOPTABLE_BY_ANNOTATION, written by someone who may
// write the object), and the grant is used up by the adoption.
import { ADOPTABLE_BY_ANNOTATION, MACHINE, type Machine } from '../../../apis/index.ts';
import type { KubeObject } from '../../../runtime/client/object.ts';
import { type JsonPatch, pointerSegment } from '../../../runtime/write/guarded-patch.ts';
import { adoptPatch } from '../../../runtime/write/owner-refs.ts';
import { describeRef } from './reference.ts';

/** Why `machine` may not adopt `obj` (an object without a controller); undefined when it may. */
export function adoptionRefusal(obj: KubeObject, machine: Machine): string | undefined {
  const grantee = obj.metadata?.annotations?.[ADOPTABLE_BY_ANNOTATION];
  const machineName = machine.metadata.name ?? '';
  if (grantee === machineName) return undefined;
  const name = describeRef({ kind: obj.kind ?? 'object', name: obj.metadata?.name ?? '' });
  const grant = `${ADOPTABLE_BY_ANNOTATION}=${machineName}`;
  return grantee === undefined
    ? `${name} has no controller and does not say this Machine may adopt it; whoever made it annotates it ${grant} to hand it over`
    : `${name} may be adopted by Machine ${grantee}, not by this one; whoever made it annotates it ${grant} to hand it over to this Machine`;
}

const ANNOTATION_PATH = `/metadata/annotations/${pointerSegment(ADOPTABLE_BY_ANNOTATION)}`;

/**
 * The patch that makes `machine` the controller of `obj` and removes the grant, tested to still name
 * `machine`; undefined when `machine` controls it already. Throws when it has another controller or
 * `machine` may not adopt it (adoptionRefusal).
 */
export function adoptionPatch(obj: KubeObject, machine: Machine): JsonPatch | undefined {
  const adopt = adoptPatch(obj, machine, MACHINE);
  if (adopt === undefined) return undefined;
  const refusal = adoptionRefusal(obj, machine);
  if (refusal !== undefined) throw new Error(refusal);
  return [
    ...adopt,
    { op: 'test', path: ANNOTATION_PATH, value: machine.metadata.name },
    { op: 'remove', path: ANNOTATION_PATH },
  ];
}
