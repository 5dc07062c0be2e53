// Which Machines an event of another object concerns (the controller's event maps).
import { MACHINE, type Machine } from '../../apis/index.ts';
import type { Informer } from '../../runtime/cache/informer.ts';
import type { ResourceDiscovery } from '../../runtime/client/discovery.ts';
import { controllerRefOf, type KubeObject } from '../../runtime/client/object.ts';
import type { Request } from '../../runtime/controller/reconciler.ts';
import type { MapFunc } from '../../runtime/controller/watch.ts';
import { creationBlocked } from './logic/gate.ts';
import { groupOf, infrastructureRefOf, refersTo } from './logic/reference.ts';

const requestFor = (machine: Machine): Request => ({
  namespace: machine.metadata.namespace ?? '',
  name: machine.metadata.name ?? '',
});

/**
 * A provider object's event concerns the Machine that controls it and every Machine whose reference
 * names it (the one waiting for it to exist, or kept out by another owner).
 */
export function providerRequests(machines: Informer<Machine>): MapFunc<KubeObject> {
  return (obj) => {
    const namespace = obj.metadata?.namespace ?? '';
    const requests = new Map<string, Request>();
    const owner = controllerRefOf(obj);
    if (owner && owner.kind === MACHINE.kind && groupOf(owner.apiVersion) === MACHINE.group) {
      requests.set(owner.name, { namespace, name: owner.name });
    }
    for (const machine of machines.list({ namespace })) {
      if (refersTo(machine, obj)) requests.set(machine.metadata.name ?? '', requestFor(machine));
    }
    return [...requests.values()];
  };
}

/**
 * A CustomResourceDefinition `<plural>.<group>` that appears, changes (its contract label, its
 * Established condition) or goes concerns every Machine referencing a kind of that group: of that
 * plural, when discovery already told which plural the kind has. Not a Machine that waits for the
 * backup finalizer (logic/gate.ts): it reads nothing of its provider's kind yet, and the finalizer's
 * arrival wakes it.
 */
export function crdRequests(machines: Informer<Machine>, discovery: ResourceDiscovery): MapFunc<KubeObject> {
  return (crd) => {
    const name = crd.metadata?.name ?? '';
    const dot = name.indexOf('.');
    if (dot < 0) return [];
    const plural = name.slice(0, dot);
    const group = name.slice(dot + 1);
    return machines
      .list()
      .filter((machine) => {
        if (creationBlocked(machine) !== undefined) return false;
        const ref = infrastructureRefOf(machine);
        if (groupOf(ref.apiVersion) !== group) return false;
        const known = discovery.cached(ref.apiVersion, ref.kind);
        return known === undefined || known.plural === plural;
      })
      .map(requestFor);
  };
}
