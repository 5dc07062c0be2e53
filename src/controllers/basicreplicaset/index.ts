import type { V1Pod } from '@kubernetes/client-node';
import { BASIC_REPLICA_SET, type BasicReplicaSet } from '../../apis/index.ts';
import { controllerRefOf, type KubeObject } from '../../runtime/client/object.ts';
import { CoreTypes } from '../../runtime/client/resource.ts';
import { generationChanged } from '../../runtime/controller/predicates.ts';
import type { Request } from '../../runtime/controller/reconciler.ts';
import { ControllerExpectations } from '../../runtime/expectations.ts';
import { selectorMatches } from '../../runtime/labels.ts';
import type { Manager } from '../../runtime/manager/manager.ts';
import { StatusDebouncer } from '../../runtime/write/status-debounce.ts';
import { createStatusWriter } from '../../runtime/write/status-writer.ts';
import { BasicReplicaSetReconciler } from './reconciler.ts';

export const CONTROLLER_NAME = 'basicreplicaset';

function ownerKey(pod: KubeObject): string | undefined {
  const ref = controllerRefOf(pod);
  if (!ref || ref.kind !== BASIC_REPLICA_SET.kind) return undefined;
  return `${pod.metadata?.namespace}/${ref.name}`;
}

/** BasicReplicaSet: owns Pods; the only controller that creates or deletes them. */
export function registerBasicReplicaSetController(manager: Manager): void {
  const sets = manager.cache.informerFor<BasicReplicaSet>(BASIC_REPLICA_SET);
  const pods = manager.cache.informerFor<V1Pod>(CoreTypes.Pod);
  const expectations = new ControllerExpectations({
    log: manager.log.child({ controller: CONTROLLER_NAME }),
  });

  // Observations must reach the expectations before the owner is enqueued (handlers run in order).
  pods.addHandler({
    onAdd: (pod) => {
      const key = ownerKey(pod);
      if (key) expectations.creationObserved(key);
    },
    onUpdate: (oldPod, newPod) => {
      const key = ownerKey(newPod);
      if (key && !oldPod.metadata?.deletionTimestamp && newPod.metadata?.deletionTimestamp) {
        expectations.deletionObserved(key, newPod.metadata.uid ?? '');
      }
    },
    onDelete: (pod) => {
      const key = ownerKey(pod);
      if (key) expectations.deletionObserved(key, pod.metadata?.uid ?? '');
    },
  });

  /** An orphan pod wakes every set in its namespace whose selector matches it (for adoption). */
  const orphanOwners = (pod: V1Pod): Request[] => {
    if (controllerRefOf(pod)) return [];
    return sets
      .list({ namespace: pod.metadata?.namespace })
      .filter((rs) => selectorMatches(rs.spec.selector, pod.metadata?.labels))
      .map((rs) => ({ namespace: rs.metadata.namespace ?? '', name: rs.metadata.name ?? '' }));
  };

  const status = createStatusWriter({
    client: manager.client,
    type: BASIC_REPLICA_SET,
    cache: sets,
    log: manager.log.child({ controller: CONTROLLER_NAME }),
  });
  const controller = manager
    .controller(CONTROLLER_NAME)
    .for(BASIC_REPLICA_SET, generationChanged)
    .owns(CoreTypes.Pod)
    .watches<V1Pod>(CoreTypes.Pod, orphanOwners)
    .complete(
      new BasicReplicaSetReconciler({
        client: manager.client,
        sets,
        pods,
        expectations,
        events: manager.events,
        debouncer: new StatusDebouncer(),
        statusWriter: status.writer,
      }),
    );
  status.attach(controller);
}
