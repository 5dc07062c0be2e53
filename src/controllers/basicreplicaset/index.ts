import {
  BASIC_REPLICA_SET,
  type BasicReplicaSet,
  REPLICA_SET_POD_LABEL,
  REPLICA_SET_POD_VALUE,
} from '../../apis/index.ts';
import type { Informer } from '../../runtime/cache/informer.ts';
import { controllerRefOf, type KubeObject } from '../../runtime/client/object.ts';
import { CoreTypes } from '../../runtime/client/resource.ts';
import {
  any,
  deletionChanged,
  generationChanged,
  labelsChanged,
  ownerReferencesChanged,
  type Predicate,
} from '../../runtime/controller/predicates.ts';
import type { Request } from '../../runtime/controller/reconciler.ts';
import { ControllerExpectations } from '../../runtime/expectations.ts';
import { selectorMatches } from '../../runtime/labels.ts';
import type { Manager } from '../../runtime/manager/manager.ts';
import type { CachedPod } from './cached.ts';
import { ClaimedArrivals } from './logic/claimed-arrivals.ts';
import { Departures } from './logic/departures.ts';
import { podObservers } from './pod-observers.ts';
import { BasicReplicaSetReconciler } from './reconciler.ts';

export const CONTROLLER_NAME = 'basicreplicaset';

/** The pods this controller manages: full objects, only those with our marker label. */
export const MANAGED_PODS_SELECTOR = `${REPLICA_SET_POD_LABEL}=${REPLICA_SET_POD_VALUE}`;
/** Every other pod of the watched namespaces, metadata only: candidates for adoption. */
export const OTHER_PODS_SELECTOR = `!${REPLICA_SET_POD_LABEL}`;

export interface PodInformers {
  /** Full pods carrying our marker label: the pods the sets control (and marked orphans). */
  managed: Informer<CachedPod>;
  /** Metadata (labels, owners, deletion state) of the pods without it: orphans a set may adopt. */
  others: Informer<KubeObject>;
}

/**
 * The two pod informers this controller reads. Memory follows what it manages: whole pods only for
 * its own; for all other pods just the few metadata fields adoption needs.
 */
export function podInformers(manager: Manager): PodInformers {
  return {
    managed: manager.cache.informerFor<CachedPod>(CoreTypes.Pod, { labelSelector: MANAGED_PODS_SELECTOR }),
    others: manager.cache.informerFor<KubeObject>(CoreTypes.Pod, {
      labelSelector: OTHER_PODS_SELECTOR,
      metadataOnly: true,
    }),
  };
}

/**
 * Counts whose rise alone is progress worth reporting at most once a second: the sets' availability
 * drives rollouts, so it is not held back longer.
 */
const PROGRESS_COUNTS = ['replicas', 'activeReplicas', 'readyReplicas', 'availableReplicas'] as const;
const PROGRESS_INTERVAL_MS = 1000;

/** Metadata updates that can change who should own a pod (upstream updatePod's labelChanged || controllerRefChanged). */
const claimRelevantChange: Predicate = any(labelsChanged, ownerReferencesChanged, deletionChanged);

/** BasicReplicaSet: owns Pods; the only controller that creates or deletes them. */
export function registerBasicReplicaSetController(manager: Manager): void {
  const sets = manager.cache.informerFor<BasicReplicaSet>(BASIC_REPLICA_SET);
  const pods = podInformers(manager);
  const expectations = new ControllerExpectations({
    log: manager.log.child({ controller: CONTROLLER_NAME }),
  });
  const claimedArrivals = new ClaimedArrivals();
  const departures = new Departures();

  /** An orphan pod wakes every set in its namespace whose selector matches it (for adoption). */
  const orphanOwners = (pod: KubeObject): Request[] => {
    if (controllerRefOf(pod)) return [];
    return sets
      .list({ namespace: pod.metadata?.namespace })
      .filter((rs) => selectorMatches(rs.spec.selector, pod.metadata?.labels))
      .map((rs) => ({ namespace: rs.metadata.namespace ?? '', name: rs.metadata.name ?? '' }));
  };

  // Observations reach the expectations before the owner is enqueued (the builder's observe()).
  const observers = podObservers({ sets, otherPods: pods.others, expectations, claimedArrivals, departures });

  manager
    .controller(CONTROLLER_NAME)
    .for(BASIC_REPLICA_SET, generationChanged)
    .status({
      progress: {
        counts: PROGRESS_COUNTS,
        intervalMs: PROGRESS_INTERVAL_MS,
        // Every pod available is what the owning BasicDeployment waits for (its rollout's next step).
        done: (status) => status.replicas !== undefined && status.availableReplicas === status.replicas,
      },
    })
    .observe(pods.managed, observers.managed)
    .observe(pods.others, observers.others)
    .owns(pods.managed)
    .watches(pods.managed, orphanOwners)
    // Pods without the marker: orphans to adopt, and pods of a set that lost the marker.
    .owns(pods.others, claimRelevantChange)
    .watches(pods.others, orphanOwners, claimRelevantChange)
    .complete(
      new BasicReplicaSetReconciler({
        client: manager.client,
        sets,
        pods: pods.managed,
        otherPods: pods.others,
        expectations,
        claimedArrivals,
        departures,
        events: manager.eventsFor(CONTROLLER_NAME, BASIC_REPLICA_SET),
      }),
    );
}
