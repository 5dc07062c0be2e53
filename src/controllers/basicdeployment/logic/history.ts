import type { Timestamp } from '../../../runtime/time.ts';
import { compareByCreation } from './ordering.ts';

/** A replica set as revision history sees it. */
export interface HistorySet {
  name: string;
  /** Parsed revision; undefined when the recorded value is not a number (see parseRevision). */
  revision?: number;
  creationTimestamp?: Timestamp;
  specReplicas: number;
  statusReplicas: number;
  generation?: number;
  observedGeneration?: number;
  /** metadata.deletionTimestamp is set. */
  deleting?: boolean;
}

/** Upstream treats a limit of MaxInt32 as "keep everything". */
const KEEP_ALL = 2147483647;

const DECIMAL_INTEGER = /^[+-]?\d+$/;

/**
 * A revision as recorded on a replica set: absent means 0 (upstream Revision), a non-number means
 * undefined, which revision ordering and maxRevision skip.
 */
export function parseRevision(recorded: string | undefined): number | undefined {
  if (recorded === undefined) return 0;
  if (!DECIMAL_INTEGER.test(recorded)) return undefined;
  const revision = Number(recorded);
  return Number.isSafeInteger(revision) ? revision : undefined;
}

/** The highest revision among the sets, 0 when there is none (upstream MaxRevision). */
export function maxRevision(sets: readonly { revision?: number }[]): number {
  return sets.reduce(
    (max, set) => (set.revision !== undefined && set.revision > max ? set.revision : max),
    0,
  );
}

/** Lowest revision first; sets with equal or unparsable revisions by creation time, then name. */
export function compareByRevision(
  a: { name: string; revision?: number; creationTimestamp?: Timestamp },
  b: { name: string; revision?: number; creationTimestamp?: Timestamp },
): number {
  if (a.revision === undefined || b.revision === undefined || a.revision === b.revision) {
    return compareByCreation(a, b);
  }
  return a.revision - b.revision;
}

export function sortByRevision<T extends { name: string; revision?: number; creationTimestamp?: Timestamp }>(
  sets: readonly T[],
): T[] {
  return [...sets].sort(compareByRevision);
}

/**
 * Old sets to delete so at most `revisionHistoryLimit` remain (upstream cleanupDeployment). The
 * oldest revisions beyond the limit are candidates, but a candidate is kept while it still wants or
 * has pods or its status lags its spec, so fewer sets than the excess may be returned. Sets already
 * being deleted neither count nor get returned. An undefined or MaxInt32 limit keeps everything.
 */
export function setsToDeleteForHistoryLimit<T extends HistorySet>(
  oldSets: readonly T[],
  revisionHistoryLimit: number | undefined,
): T[] {
  if (revisionHistoryLimit === undefined || revisionHistoryLimit === KEEP_ALL) return [];
  const cleanable = oldSets.filter((set) => !set.deleting);
  const excess = cleanable.length - revisionHistoryLimit;
  if (excess <= 0) return [];
  return sortByRevision(cleanable)
    .slice(0, excess)
    .filter(
      (set) =>
        set.statusReplicas === 0 &&
        set.specReplicas === 0 &&
        (set.generation ?? 0) <= (set.observedGeneration ?? 0),
    );
}
