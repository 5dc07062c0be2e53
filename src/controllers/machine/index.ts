import { CONTRACT_VERSION, MACHINE, type Machine } from '../../apis/index.ts';
import { ResourceDiscovery } from '../../runtime/client/discovery.ts';
import type { KubeObject, Unstructured } from '../../runtime/client/object.ts';
import { CoreTypes } from '../../runtime/client/resource.ts';
import { KindWatches } from '../../runtime/controller/kind-watches.ts';
import type { Predicate } from '../../runtime/controller/predicates.ts';
import type { Manager } from '../../runtime/manager/manager.ts';
import { MachineReconciler } from './reconciler.ts';
import { crdRequests, providerRequests } from './requests.ts';

export const CONTROLLER_NAME = 'machine';

const finalizersOf = (obj: KubeObject): string => JSON.stringify(obj.metadata?.finalizers ?? []);

/**
 * Machine updates worth a reconcile: a spec change (generation), the start of deletion, or a change
 * of finalizers (creation waits for the backup finalizer, see logic/gate.ts; deletion waits for
 * every other finalizer to go). Status writes (its own, and the machine-backup controller's
 * condition) are ignored.
 */
export const machineChanged: Predicate = {
  update: (oldObj, newObj) =>
    oldObj.metadata?.generation !== newObj.metadata?.generation ||
    (oldObj.metadata?.deletionTimestamp == null) !== (newObj.metadata?.deletionTimestamp == null) ||
    finalizersOf(oldObj) !== finalizersOf(newObj),
};

/**
 * Machine: realized by a provider object of the infrastructure contract (docs/contracts.md).
 * Reconciles on Machine changes, on events of the provider objects (their kinds are watched from the
 * first Machine that references one), and on changes of CustomResourceDefinitions (a kind that
 * declares the contract, or stops declaring it).
 */
export function registerMachineController(manager: Manager): void {
  const machines = manager.cache.informerFor<Machine>(MACHINE);
  const crds = manager.cache.informerFor<KubeObject>(CoreTypes.CustomResourceDefinition, {
    metadataOnly: true,
  });
  const discovery = new ResourceDiscovery(manager.client);
  const providers = new KindWatches<Unstructured>(manager.cache, providerRequests(machines));
  const controller = manager
    .controller(CONTROLLER_NAME)
    .for(MACHINE, machineChanged)
    // The machine-backup controller sets a condition of its own in this status: each owns its fields.
    .status({ strategy: 'apply' })
    .watches(crds, crdRequests(machines, discovery))
    .complete(
      new MachineReconciler({
        client: manager.client,
        crds,
        discovery,
        providers,
        events: manager.eventsFor(CONTROLLER_NAME, MACHINE),
      }),
    );
  providers.bind(controller);
  manager.log
    .child({ controller: CONTROLLER_NAME })
    .info('Machine infrastructure contract versions supported', { versions: [CONTRACT_VERSION] });
}
