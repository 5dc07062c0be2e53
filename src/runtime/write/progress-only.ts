import type { Condition } from './conditions.ts';

interface CountedStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  [count: string]: unknown;
}

function conditionKey(conditions: Condition[] | undefined, progressReasons: ReadonlySet<string>): string {
  return JSON.stringify(
    (conditions ?? [])
      .map((c) => [c.type, c.status, progressReasons.has(c.reason) ? 'progress' : c.reason])
      .sort(),
  );
}

/**
 * True when going from `current` to `next` only raises the named counts (and changes nothing else a
 * reader decides on): such a write may be held back (see ProgressOptions). A condition whose reason
 * only moves between `progressReasons` (say Progressing=True from NewReplicaSetCreated to
 * ReplicaSetUpdated) reports progress too.
 */
export function isProgressOnly(
  current: object | undefined,
  next: object,
  counts: readonly PropertyKey[],
  progressReasons: ReadonlySet<string> = new Set(),
): boolean {
  if (!current) return false;
  const before = current as CountedStatus;
  const after = next as CountedStatus;
  if (before.observedGeneration !== after.observedGeneration) return false;
  if (conditionKey(before.conditions, progressReasons) !== conditionKey(after.conditions, progressReasons)) {
    return false;
  }
  for (const key of counts) {
    const was = before[key as string];
    const is = after[key as string];
    if (typeof was !== 'number' || typeof is !== 'number' || is < was) return false;
  }
  return true;
}
