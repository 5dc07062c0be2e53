import { type Timestamp, toMillis } from '../../../runtime/time.ts';

export interface CreationOrdered {
  name: string;
  creationTimestamp?: Timestamp;
}

export interface SizedAndCreationOrdered extends CreationOrdered {
  specReplicas: number;
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Older first; equal timestamps by name (upstream ReplicaSetsByCreationTimestamp). Missing times sort first. */
export function compareByCreation(a: CreationOrdered, b: CreationOrdered): number {
  const timeA = toMillis(a.creationTimestamp) ?? Number.NEGATIVE_INFINITY;
  const timeB = toMillis(b.creationTimestamp) ?? Number.NEGATIVE_INFINITY;
  if (timeA === timeB) return compareNames(a.name, b.name);
  return timeA < timeB ? -1 : 1;
}

export function sortByCreation<T extends CreationOrdered>(sets: readonly T[]): T[] {
  return [...sets].sort(compareByCreation);
}

/** Larger first; equal sizes newest first (upstream ReplicaSetsBySizeNewer, used when scaling up). */
export function sortBySizeNewer<T extends SizedAndCreationOrdered>(sets: readonly T[]): T[] {
  return [...sets].sort((a, b) => b.specReplicas - a.specReplicas || compareByCreation(b, a));
}

/** Larger first; equal sizes oldest first (upstream ReplicaSetsBySizeOlder, used when scaling down). */
export function sortBySizeOlder<T extends SizedAndCreationOrdered>(sets: readonly T[]): T[] {
  return [...sets].sort((a, b) => b.specReplicas - a.specReplicas || compareByCreation(a, b));
}
