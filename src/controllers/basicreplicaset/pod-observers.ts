import { BASIC_REPLICA_SET, type BasicReplicaSet } from '../../apis/index.ts';
import type { Informer } from '../../runtime/cache/informer.ts';
import type { EventHandler } from '../../runtime/cache/reflector.ts';
import type { KubeObject } from '../../runtime/client/object.ts';
import type { ControllerExpectations } from '../../runtime/expectations.ts';
import type { CachedPod } from './cached.ts';
import type { ClaimedArrivals } from './logic/claimed-arrivals.ts';
import { controllingSetKey } from './logic/controlling-set.ts';
import { type Departures, mayHaveLostMarker } from './logic/departures.ts';

export interface PodObserverDeps {
  sets: Informer<BasicReplicaSet>;
  /** All other pods, metadata only. */
  otherPods: Informer<KubeObject>;
  expectations: ControllerExpectations;
  claimedArrivals: ClaimedArrivals;
  departures: Departures;
}

/** What the two pod caches tell the controller's bookkeeping, before the owner is enqueued. */
export interface PodObservers {
  /** For the cache of whole pods with our marker label. */
  managed: EventHandler<CachedPod>;
  /** For the metadata-only cache of the other pods. */
  others: EventHandler<KubeObject>;
}

/**
 * The handlers that count observed pods off the expectations and track pods between the two
 * caches (upstream addPod, updatePod and deletePod, less the enqueueing, which the builder's
 * watches do). The builder runs them before the watches enqueue the owner (its observe()).
 */
export function podObservers(deps: PodObserverDeps): PodObservers {
  const { sets, otherPods, expectations, claimedArrivals, departures } = deps;
  const ownerKey = (pod: KubeObject): string | undefined =>
    controllingSetKey(pod, BASIC_REPLICA_SET, (namespace, name) => sets.get(namespace, name)?.metadata.uid);

  const managed: EventHandler<CachedPod> = {
    onAdd: (pod) => {
      const key = ownerKey(pod);
      // A pod it adopted or marked arrives here too: the end of that claim's wait, not a creation.
      const claimed = claimedArrivals.take(pod.metadata?.uid ?? '');
      departures.arrived(pod.metadata?.uid ?? '');
      if (!key) return;
      if (pod.metadata?.deletionTimestamp) {
        // Already being deleted (seen first after a relist, or deleted right after adoption): upstream
        // addPod counts a deletion, not a creation.
        expectations.deletionObserved(key, pod.metadata.uid ?? '');
      } else if (!claimed) {
        expectations.creationObserved(key);
      }
    },
    onUpdate: (oldPod, newPod) => {
      const key = ownerKey(newPod);
      if (key && !oldPod.metadata?.deletionTimestamp && newPod.metadata?.deletionTimestamp) {
        expectations.deletionObserved(key, newPod.metadata.uid ?? '');
      }
    },
    onDelete: (pod) => {
      const key = ownerKey(pod);
      if (!key) return;
      const uid = pod.metadata?.uid ?? '';
      const deletionExpected = expectations.get(key)?.pendingDeletions.includes(uid) ?? false;
      expectations.deletionObserved(key, uid);
      // It may just have lost our marker label. (If the metadata watch was quicker, it is there already.)
      const there = otherPods.get(pod.metadata?.namespace, pod.metadata?.name ?? '')?.metadata?.uid === uid;
      if (!there && mayHaveLostMarker(pod, deletionExpected)) departures.departed(key, uid);
    },
  };
  const others: EventHandler<KubeObject> = {
    onAdd: (pod) => departures.arrived(pod.metadata?.uid ?? ''),
  };
  return { managed, others };
}
