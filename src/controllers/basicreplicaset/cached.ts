// What the BasicReplicaSet controller reads of the pods it caches (its declaration's `reads`), and
// their type as cached: reading a field the shape does not name does not compile.
import type { V1Pod } from '@kubernetes/client-node';
import { type Kept, OBJECT_FIELDS, type Shape } from '../../runtime/cache/keep-fields.ts';

/** Ranks pods for scale-down (logic/deletion-order.ts), as upstream's ReplicaSet controller does. */
export const POD_DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';

export const POD_READS = {
  ...OBJECT_FIELDS,
  // Age and deletion cost rank pods for scale-down (logic/deletion-order.ts).
  metadata: { ...OBJECT_FIELDS.metadata, annotations: { [POD_DELETION_COST_ANNOTATION]: true } },
  // Pods on no node go first, and pods sharing a node with more related pods (logic/deletion-order.ts).
  spec: { nodeName: 'shared' },
  status: {
    // Active or finished (logic/pod-state.ts).
    phase: 'shared',
    // Ready and since when: readiness, availability, deletion ranking (logic/pod-state.ts).
    conditions: { type: 'shared', status: 'shared', lastTransitionTime: 'shared' },
    // Deletion ranking (logic/pod-state.ts maxContainerRestarts).
    containerStatuses: { restartCount: true },
  },
} as const satisfies Shape<V1Pod>;

/** A pod as the controller's cache holds it. */
export type CachedPod = Kept<V1Pod, typeof POD_READS>;
