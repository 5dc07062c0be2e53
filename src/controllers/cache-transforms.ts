// What the operator's cache keeps of the core objects it caches: only the fields some controller
// reads. Nothing reads a pod's spec but its node, nor its image IDs or probe times, nor its IPs unless
// a PodMachine made it: a cached kwok pod takes about 1.5 KB of heap with these shapes instead of 5 KB
// (`npm run bench:cache`).
//
// The rule: a controller that starts reading another field of a cached Pod, Job or
// PersistentVolumeClaim adds it here, or it reads undefined. The reconciler tests run on objects
// transformed by these shapes (FakeCluster builds its informers with operatorManagerOptions), so a
// reconcile that needs a dropped field fails there; test/unit/cache/operator-transforms.test.ts shows
// what is kept of a kwok pod. The operator's own resources are cached whole: their reconcilers and
// status writers read spec and status throughout.
import type {
  V1Job,
  V1JobCondition,
  V1ObjectMeta,
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodCondition,
  V1PodStatus,
} from '@kubernetes/client-node';
import { keepFields, type Shape, type StringPool } from '../runtime/cache/keep-fields.ts';
import { POD_DELETION_COST_ANNOTATION } from './basicreplicaset/logic/pod-state.ts';
import {
  POD_MACHINE_LABEL,
  RESTORE_FAILURE_ANNOTATION,
  RESTORED_FROM_ANNOTATION,
} from './podmachine/names.ts';
import { COPY_FAILURE_ANNOTATION, COPY_REPORT_ANNOTATION } from './volumebackup/names.ts';

/**
 * What the runtime's metadata-only caches keep too (slimMetadata): identity (keys, uid
 * preconditions; the store compares resourceVersions after a relist, adoption's patch tests it),
 * labels (selectors, the marker, adoption), owners (controller references, the owner index;
 * adoption's patch tests the whole list), deletion (active or terminating) and age (deletion ranking).
 */
const METADATA = {
  name: true,
  namespace: 'shared',
  uid: true,
  resourceVersion: true,
  creationTimestamp: 'shared',
  deletionTimestamp: 'shared',
  labels: 'shared',
  ownerReferences: 'shared',
} as const satisfies Shape<V1ObjectMeta>;

/** What the object is: what a reader of any object expects (an Event's reference names it). */
const TYPE = { apiVersion: 'shared', kind: 'shared' } as const;

const CONDITION = {
  type: 'shared',
  status: 'shared',
  lastTransitionTime: 'shared',
  reason: 'shared',
  message: 'shared',
} as const satisfies Shape<V1PodCondition> & Shape<V1JobCondition>;

const POD_STATUS = {
  // Active, finished (every controller); the PodMachine's phase (podmachine/observe.ts).
  phase: 'shared',
  // Why a PodMachine's pod failed (podmachine/observe.ts).
  reason: 'shared',
  message: 'shared',
  // Ready and its time: readiness, availability, deletion ranking (basicreplicaset/logic/pod-state.ts),
  // the PodMachine's Ready (podmachine/observe.ts); why a copy pod is not scheduled (volumebackup/deadline.ts).
  conditions: CONDITION,
  containerStatuses: {
    name: 'shared',
    // Deletion ranking (pod-state.ts maxContainerRestarts).
    restartCount: true,
    // Why a container waits (volumebackup/deadline.ts) or ended (podmachine/observe.ts); what a copy
    // pod reported, its manifests or why it failed (volume-copy.ts parseCopyReport).
    state: {
      waiting: { reason: 'shared', message: 'shared' },
      terminated: { exitCode: true, reason: 'shared', message: true },
    },
    lastState: { terminated: { exitCode: true, reason: 'shared' } },
  },
} as const satisfies Shape<V1PodStatus>;

export const POD_FIELDS: Shape<V1Pod> = {
  ...TYPE,
  // The deletion cost ranks pods for scale-down (basicreplicaset/logic/deletion-order.ts).
  metadata: { ...METADATA, annotations: { [POD_DELETION_COST_ANNOTATION]: true } },
  // Pods on no node go first, and pods sharing a node with more related pods (deletion-order.ts).
  spec: { nodeName: 'shared' },
  status: POD_STATUS,
};

/**
 * A PodMachine's pod also with its IPs, the PodMachine's addresses, and whether its container has
 * started and is ready, which says which probe keeps it from Ready (podmachine/observe.ts).
 */
const POD_MACHINE_POD_FIELDS: Shape<V1Pod> = {
  ...POD_FIELDS,
  status: {
    ...POD_STATUS,
    podIPs: { ip: true },
    containerStatuses: { ...POD_STATUS.containerStatuses, ready: true, started: true },
  },
};

/**
 * What the cache keeps of a pod: POD_FIELDS, and the IPs of the pods PodMachines make (they carry
 * the PodMachine's label). Only those report addresses; the IPs of every pod would cost 144 B more
 * per cached pod (1,529 against 1,385 B at 10,000 pods, `npm run bench:cache`).
 */
export function podTransform(pool: StringPool): (pod: V1Pod) => V1Pod {
  const plain = keepFields(POD_FIELDS, pool);
  const withIPs = keepFields(POD_MACHINE_POD_FIELDS, pool);
  return (pod) => (pod.metadata?.labels?.[POD_MACHINE_LABEL] === undefined ? plain(pod) : withIPs(pod));
}

export const JOB_FIELDS: Shape<V1Job> = {
  ...TYPE,
  // Role, volume and attempt labels (podmachine/reconciler.ts, volumebackup/progress.ts); a copy's
  // recorded report or failure (volumebackup/progress.ts).
  metadata: {
    ...METADATA,
    annotations: { [COPY_REPORT_ANNOTATION]: true, [COPY_FAILURE_ANNOTATION]: true },
  },
  status: {
    // Complete or Failed, why and when (podmachine/restore.ts, volumebackup/progress.ts).
    conditions: CONDITION,
    completionTime: true,
    // Whether the Job ever had a pod (volumebackup/deadline.ts).
    active: true,
    succeeded: true,
    failed: true,
    ready: true,
  },
};

export const CLAIM_FIELDS: Shape<V1PersistentVolumeClaim> = {
  ...TYPE,
  // A restored claim is marked, a failed restore recorded (podmachine/restore.ts); a backup claim's
  // finalizer is held and let go (volumebackup/backup-claims.ts).
  metadata: {
    ...METADATA,
    annotations: { [RESTORED_FROM_ANNOTATION]: true, [RESTORE_FAILURE_ANNOTATION]: true },
    finalizers: true,
  },
  // A backup claim is as big as its source, of the same class (volumebackup/children.ts).
  spec: { resources: { requests: true }, storageClassName: 'shared' },
  // Bound or not (podmachine/reconciler.ts); the source's capacity (volumebackup/children.ts).
  status: { phase: 'shared', capacity: true },
};
