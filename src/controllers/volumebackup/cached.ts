// What the VolumeBackup controller reads of the claims, copy Jobs and their pods it caches (its
// declaration's `reads`), and their types as cached: reading a field a shape does not name does not
// compile.
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { JOB_OUTCOME_READS } from '../../apis/index.ts';
import { type Kept, OBJECT_FIELDS, type Shape } from '../../runtime/cache/keep-fields.ts';
import { COPY_FAILURE_ANNOTATION, COPY_REPORT_ANNOTATION } from './names.ts';

/**
 * Of a copy Job's pods: where the copy stands (logic/deadline.ts) and what it reported
 * (logic/copy-record.ts).
 */
export const POD_READS = {
  ...OBJECT_FIELDS,
  status: {
    phase: 'shared',
    // Why a copy pod is not scheduled (logic/deadline.ts).
    conditions: { type: 'shared', status: 'shared', reason: 'shared', message: 'shared' },
    containerStatuses: {
      name: 'shared',
      state: {
        // Why it waits (logic/deadline.ts).
        waiting: { reason: 'shared', message: 'shared' },
        // Its report, the manifests, or why it failed (copyTermination).
        terminated: { exitCode: true, message: true },
      },
    },
  },
} as const satisfies Shape<V1Pod>;

export const JOB_READS = {
  ...OBJECT_FIELDS,
  // Its volume and attempt labels; a copy's recorded report or failure (logic/progress.ts).
  metadata: {
    ...OBJECT_FIELDS.metadata,
    annotations: { [COPY_REPORT_ANNOTATION]: true, [COPY_FAILURE_ANNOTATION]: true },
  },
  status: {
    // Complete or Failed, why and when (jobOutcome, logic/progress.ts).
    ...JOB_OUTCOME_READS.status,
    // Whether the Job ever had a pod (logic/deadline.ts).
    active: true,
    succeeded: true,
    failed: true,
    ready: true,
  },
} as const satisfies Shape<V1Job>;

export const CLAIM_READS = {
  ...OBJECT_FIELDS,
  // A backup claim's finalizer is held and let go (logic/backup-claims.ts).
  metadata: { ...OBJECT_FIELDS.metadata, finalizers: true },
  // A backup claim is as big as its source, of the same class (logic/children.ts).
  spec: { resources: { requests: true }, storageClassName: 'shared' },
  // Bound or not (logic/backup-claims.ts); the source's capacity (logic/children.ts).
  status: { phase: 'shared', capacity: true },
} as const satisfies Shape<V1PersistentVolumeClaim>;

/** A copy Job's pod, as the cache holds it. */
export type CachedPod = Kept<V1Pod, typeof POD_READS>;
export type CachedJob = Kept<V1Job, typeof JOB_READS>;
/** A backup claim, or the source claim of a volume (a PodMachine's, which the cache holds too). */
export type CachedClaim = Kept<V1PersistentVolumeClaim, typeof CLAIM_READS>;
