import type { Timestamp } from '../../../runtime/time.ts';
import { compareByCreation } from './ordering.ts';

/** A replica set as revision history sees it. */
export interface HistorySet {
  name: string;
  /** Parsed revision; undefined when the recorded value is not an int64 (see parseRevision). */
  revision?: bigint;
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

/** What strconv.ParseInt(v, 10, 64) accepts: an optional sign, then ASCII digits (no '_' in base 10). */
const DECIMAL_INTEGER = /^[+-]?[0-9]+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A revision as recorded on a replica set, read as an int64 as upstream Revision does
 * (strconv.ParseInt(v, 10, 64)): absent means 0; a value that is not a decimal integer, or lies
 * outside int64, is undefined, which revision ordering and maxRevision skip.
 */
export function parseRevision(recorded: string | undefined): bigint | undefined {
  if (recorded === undefined) return 0n;
  if (!DECIMAL_INTEGER.test(recorded)) return undefined;
  const revision = BigInt(recorded);
  return revision >= INT64_MIN && revision <= INT64_MAX ? revision : undefined;
}

/** The highest revision among the sets, 0 when there is none (upstream MaxRevision). */
export function maxRevision(sets: readonly { revision?: bigint }[]): bigint {
  return sets.reduce(
    (max, set) => (set.revision !== undefined && set.revision > max ? set.revision : max),
    0n,
  );
}

/**
 * The revision after `max` (upstream getNewReplicaSet: maxOldRevision+1). Go's int64 addition wraps,
 * so after int64 max it is int64 min: a set then gets no revision annotation (upstream
 * SetNewReplicaSetAnnotations only writes a revision above the set's, 0 when it has none), exactly
 * as in kube-controller-manager.
 */
export function nextRevision(max: bigint): bigint {
  return BigInt.asIntN(64, max + 1n);
}

/** Lowest revision first; sets with equal or unparsable revisions by creation time, then name. */
export function compareByRevision(
  a: { name: string; revision?: bigint; creationTimestamp?: Timestamp },
  b: { name: string; revision?: bigint; creationTimestamp?: Timestamp },
): number {
  if (a.revision === undefined || b.revision === undefined || a.revision === b.revision) {
    return compareByCreation(a, b);
  }
  return a.revision < b.revision ? -1 : 1;
}

export function sortByRevision<T extends { name: string; revision?: bigint; creationTimestamp?: Timestamp }>(
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
