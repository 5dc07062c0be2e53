/**
 * Most pods one reconcile creates or deletes (upstream burstReplicas), so a huge diff is worked off
 * over several reconciles instead of flooding the API server at once.
 */
export const BURST_REPLICAS = 500;

/** Size of the first slow-start batch (upstream SlowStartInitialBatchSize). */
export const SLOW_START_INITIAL_BATCH_SIZE = 1;

/**
 * Batch sizes for creating `count` pods: 1, 2, 4, ... doubling, the last one cut to what remains.
 * A failing call (bad template, quota) then fails once or twice instead of `count` times.
 */
export function slowStartBatchSizes(
  count: number,
  initialBatchSize = SLOW_START_INITIAL_BATCH_SIZE,
): number[] {
  const sizes: number[] = [];
  let remaining = count;
  for (let size = Math.min(remaining, initialBatchSize); size > 0; size = Math.min(2 * size, remaining)) {
    sizes.push(size);
    remaining -= size;
  }
  return sizes;
}

export interface SlowStartResult {
  succeeded: number;
  failed: number;
  /** Calls never made because an earlier batch failed. */
  skipped: number;
  errors: unknown[];
}

/**
 * Calls `operation` `count` times in slow-start batches (upstream slowStartBatch). Calls within a
 * batch run concurrently; after the first batch with a failure no further batch starts. The index
 * passed to `operation` runs from 0 to count - 1 across batches.
 */
export async function runSlowStart(
  count: number,
  operation: (index: number) => Promise<unknown>,
  initialBatchSize = SLOW_START_INITIAL_BATCH_SIZE,
): Promise<SlowStartResult> {
  const result: SlowStartResult = { succeeded: 0, failed: 0, skipped: 0, errors: [] };
  let started = 0;
  for (const size of slowStartBatchSizes(count, initialBatchSize)) {
    const batch = Array.from({ length: size }, (_, offset) => operation(started + offset));
    started += size;
    for (const outcome of await Promise.allSettled(batch)) {
      if (outcome.status === 'fulfilled') {
        result.succeeded += 1;
      } else {
        result.failed += 1;
        result.errors.push(outcome.reason);
      }
    }
    if (result.failed > 0) break;
  }
  result.skipped = Math.max(0, count - started);
  return result;
}

export interface ReplicaChange {
  /** Pods to create in this reconcile. */
  create: number;
  /** Pods to delete in this reconcile. */
  delete: number;
}

/**
 * How far to move from `activePods` towards `desired` in one reconcile (upstream manageReplicas):
 * the difference in one direction, at most `burst`.
 */
export function planReplicaChange(
  activePods: number,
  desired: number,
  burst = BURST_REPLICAS,
): ReplicaChange {
  const diff = activePods - desired;
  if (diff < 0) return { create: Math.min(-diff, burst), delete: 0 };
  return { create: 0, delete: Math.min(diff, burst) };
}
