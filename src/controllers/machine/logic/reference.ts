// Which provider object a Machine uses, and which Machines an object concerns (pure).
import { type InfrastructureReference, type Machine, POD_MACHINE } from '../../../apis/index.ts';
import type { KubeObject } from '../../../runtime/client/object.ts';

/** The group of an `apiVersion` ("" for the core group). */
export function groupOf(apiVersion: string | undefined): string {
  const slash = apiVersion?.indexOf('/') ?? -1;
  return slash < 0 ? '' : (apiVersion ?? '').slice(0, slash);
}

/** An inline Machine (image, command, args, volumes) is realized as a PodMachine of its name. */
export function isInline(machine: Machine): boolean {
  return machine.spec.infrastructureRef === undefined;
}

/**
 * The provider object a Machine uses: spec.infrastructureRef, or for an inline Machine the PodMachine
 * of the Machine's name (in either case in the Machine's namespace; see crossNamespaceProblem).
 */
export function infrastructureRefOf(machine: Machine): InfrastructureReference {
  const ref = machine.spec.infrastructureRef;
  if (ref) return { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name };
  return { apiVersion: POD_MACHINE.apiVersion, kind: POD_MACHINE.kind, name: machine.metadata.name ?? '' };
}

/** Why the Machine's reference cannot be followed because of its namespace; undefined when it can. */
export function crossNamespaceProblem(machine: Machine): string | undefined {
  const namespace = machine.spec.infrastructureRef?.namespace;
  const own = machine.metadata.namespace ?? '';
  if (namespace === undefined || namespace === '' || namespace === own) return undefined;
  const ref = infrastructureRefOf(machine);
  return `spec.infrastructureRef names ${ref.kind} ${ref.name} in namespace ${namespace}; a provider object must be in the Machine's namespace (${own}). Create a Machine there, or recreate this one with a reference without another namespace`;
}

/** "PodMachine web", how messages name a provider object. */
export function describeRef(ref: Pick<InfrastructureReference, 'kind' | 'name'>): string {
  return `${ref.kind} ${ref.name}`;
}

/** Whether `machine` uses `obj` as its provider object (by group, kind, namespace and name). */
export function refersTo(machine: Machine, obj: KubeObject): boolean {
  if ((obj.metadata?.namespace ?? '') !== (machine.metadata.namespace ?? '')) return false;
  if (crossNamespaceProblem(machine)) return false;
  const ref = infrastructureRefOf(machine);
  return (
    ref.name === obj.metadata?.name &&
    ref.kind === obj.kind &&
    groupOf(ref.apiVersion) === groupOf(obj.apiVersion)
  );
}
