// Wires the reconciler into a manager: what it watches, what the cache holds, how events are signed.
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { STATEFULSET_MACHINE, type StatefulSetMachine } from './api.ts';
import {
  annotationsChanged,
  any,
  type CacheOptions,
  CoreTypes,
  deletionChanged,
  generationChanged,
  type KubeObject,
  type Manager,
  type ManagerOptions,
  type Request,
  resourceId,
  VOLUME_BACKUP,
  type VolumeBackup,
} from './basic-operator.ts';
import type { ProviderOptions } from './deps.ts';
import { MACHINE_LABEL, MANAGED_BY_LABEL, MANAGED_BY_VALUE } from './names.ts';
import { StatefulSetMachineReconciler } from './reconciler.ts';
import { STATEFUL_SET } from './statefulset.ts';

export const CONTROLLER_NAME = 'statefulsetmachine';

/**
 * Of StatefulSets, pods, claims and Jobs the cache holds only those made for a StatefulSetMachine
 * (they carry its name in MACHINE_LABEL), so memory follows what the provider manages.
 */
const byOurLabel = { labelSelector: MACHINE_LABEL };
const cache: CacheOptions = {
  byObject: {
    [resourceId(STATEFUL_SET)]: byOurLabel,
    [resourceId(CoreTypes.Pod)]: byOurLabel,
    [resourceId(CoreTypes.PersistentVolumeClaim)]: byOurLabel,
    [resourceId(CoreTypes.Job)]: byOurLabel,
  },
};

export const providerManagerOptions: ManagerOptions = {
  cache,
  events: {
    reportingController: 'examples.basicoperator.dev/statefulset-provider',
    labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
  },
};

/** The StatefulSetMachine named in an object's MACHINE_LABEL (pods and claims are the StatefulSet's). */
function labelledMachine(obj: KubeObject): Request[] {
  const name = obj.metadata?.labels?.[MACHINE_LABEL];
  return name ? [{ namespace: obj.metadata?.namespace ?? '', name }] : [];
}

/**
 * Reconciles StatefulSetMachines on a spec change (creation), a stop request (an annotation), the
 * start of deletion; on changes to their StatefulSets and restore Jobs (controlled by them), to the
 * pod and claims kube-controller-manager makes (found by label), and to a VolumeBackup one of their
 * volumes restores from.
 */
export function registerStatefulSetMachineController(manager: Manager, options: ProviderOptions): void {
  const machines = manager.cache.informerFor<StatefulSetMachine>(STATEFULSET_MACHINE);
  const restoringFrom = (backup: VolumeBackup): Request[] => {
    const namespace = backup.metadata.namespace ?? '';
    return machines
      .list({ namespace })
      .filter((m) => m.spec.volumes?.some((v) => v.restoreFrom?.volumeBackup === backup.metadata.name))
      .map((m) => ({ namespace, name: m.metadata.name ?? '' }));
  };
  manager
    .controller(CONTROLLER_NAME)
    .for(STATEFULSET_MACHINE, any(generationChanged, annotationsChanged, deletionChanged))
    // The provider is the only writer of its status.
    .status()
    .owns(STATEFUL_SET)
    .owns(CoreTypes.Job)
    .watches<V1Pod>(CoreTypes.Pod, labelledMachine)
    .watches<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim, labelledMachine)
    .watches<VolumeBackup>(VOLUME_BACKUP, restoringFrom)
    .complete(
      new StatefulSetMachineReconciler({
        ...options,
        client: manager.client,
        machines,
        statefulSets: manager.cache.informerFor(STATEFUL_SET),
        pods: manager.cache.informerFor<V1Pod>(CoreTypes.Pod),
        claims: manager.cache.informerFor<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim),
        jobs: manager.cache.informerFor<V1Job>(CoreTypes.Job),
        backups: manager.cache.informerFor<VolumeBackup>(VOLUME_BACKUP),
        events: manager.eventsFor(CONTROLLER_NAME, STATEFULSET_MACHINE),
      }),
    );
}
