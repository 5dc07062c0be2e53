// What the PodMachine controller reads of the pods, claims and Jobs it caches (its declaration's
// `reads`), and their types as cached: reading a field a shape does not name does not compile.
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { JOB_OUTCOME_READS } from '../../apis/index.ts';
import { type Kept, OBJECT_FIELDS, type Shape } from '../../runtime/cache/keep-fields.ts';
import { RESTORE_FAILURE_ANNOTATION, RESTORED_FROM_ANNOTATION } from './names.ts';

/**
 * What it reads of its pod and its restore Jobs' pods (logic/observe.ts, logic/restore.ts) that a
 * pod has only when it failed, waits or ended: kept of every cached pod, where it costs only the
 * pods that have it.
 */
export const POD_READS = {
  ...OBJECT_FIELDS,
  status: {
    phase: 'shared',
    // Why the pod failed (podFailure).
    reason: 'shared',
    message: 'shared',
    // Ready, and why not; why it is not scheduled (podPendingReason).
    conditions: { type: 'shared', status: 'shared', reason: 'shared', message: 'shared' },
    containerStatuses: {
      name: 'shared',
      restartCount: true,
      // Why the container waits or ended (logic/observe.ts); a copy pod's report (logic/restore.ts).
      state: {
        waiting: { reason: 'shared', message: 'shared' },
        terminated: { exitCode: true, reason: 'shared', message: true },
      },
      lastState: { terminated: { exitCode: true, reason: 'shared' } },
    },
  },
} as const satisfies Shape<V1Pod>;

/**
 * What it reads of the pods it makes (they carry POD_MACHINE_LABEL): POD_READS, and what every
 * running pod has, kept of those pods only: its IPs (the PodMachine's addresses), and whether its
 * container has started and is ready, which says which probe keeps it from Ready (logic/observe.ts).
 */
export const OWN_POD_READS = {
  ...POD_READS,
  status: {
    ...POD_READS.status,
    podIPs: { ip: true },
    containerStatuses: { ...POD_READS.status.containerStatuses, ready: true, started: true },
  },
} as const satisfies Shape<V1Pod>;

export const CLAIM_READS = {
  ...OBJECT_FIELDS,
  // A restored claim is marked, a failed restore recorded (logic/restore.ts).
  metadata: {
    ...OBJECT_FIELDS.metadata,
    annotations: { [RESTORED_FROM_ANNOTATION]: true, [RESTORE_FAILURE_ANNOTATION]: true },
  },
  // Bound or not (reconciler.ts; a backup claim: restoreSource).
  status: { phase: 'shared' },
} as const satisfies Shape<V1PersistentVolumeClaim>;

export const JOB_READS = {
  // Its role label (reconciler.ts).
  ...OBJECT_FIELDS,
  // Complete or Failed, why and when (jobOutcome).
  status: JOB_OUTCOME_READS.status,
} as const satisfies Shape<V1Job>;

/** Its pod or a restore Job's pod, as the cache holds it. */
export type CachedPod = Kept<V1Pod, typeof OWN_POD_READS>;
export type CachedClaim = Kept<V1PersistentVolumeClaim, typeof CLAIM_READS>;
export type CachedJob = Kept<V1Job, typeof JOB_READS>;
