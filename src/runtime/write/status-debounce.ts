import type { Condition } from './conditions.ts';

/**
 * Spaces out status writes that only report progress. Every pod that becomes ready changes its
 * owner's counts; writing each one costs an API call that competes with creating pods. Writes that
 * matter (a condition changes, a count goes down, a new generation is observed) go out at once;
 * count increases are written at most once per interval and the reconcile is requeued for the rest.
 * Delaying good news is always safe: readers act on less progress than there is, never more.
 */
export class StatusDebouncer {
  private readonly lastWrite = new Map<string, number>();
  private readonly intervalMs: number;
  private readonly now: () => number;

  constructor(intervalMs = 1000, now: () => number = Date.now) {
    this.intervalMs = intervalMs;
    this.now = now;
  }

  /** Milliseconds to hold a progress-only write for `key` back; 0 means write now. */
  holdFor(key: string): number {
    const last = this.lastWrite.get(key);
    if (last === undefined) return 0;
    return Math.max(0, last + this.intervalMs - this.now());
  }

  wrote(key: string): void {
    this.lastWrite.set(key, this.now());
  }

  forget(key: string): void {
    this.lastWrite.delete(key);
  }
}

interface CountedStatus {
  observedGeneration?: number;
  conditions?: Condition[];
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
 * reader decides on): such a write may be held back by a StatusDebouncer. A condition whose reason
 * only moves between `progressReasons` (say Progressing=True from NewReplicaSetCreated to
 * ReplicaSetUpdated) reports progress too.
 */
export function isProgressOnly<S extends CountedStatus>(
  current: S | undefined,
  next: S,
  counts: readonly (keyof S)[],
  progressReasons: ReadonlySet<string> = new Set(),
): boolean {
  if (!current) return false;
  if (current.observedGeneration !== next.observedGeneration) return false;
  if (conditionKey(current.conditions, progressReasons) !== conditionKey(next.conditions, progressReasons)) {
    return false;
  }
  for (const key of counts) {
    const before = current[key];
    const after = next[key];
    if (typeof before !== 'number' || typeof after !== 'number' || after < before) return false;
  }
  return true;
}
