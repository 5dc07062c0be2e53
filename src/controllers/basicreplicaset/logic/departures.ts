import type { CachedPod } from '../cached.ts';
import { isPodFinished } from './pod-state.ts';

/**
 * Pods that left the controller's pod cache without being deleted, and have not shown up in the
 * cache of the other pods yet.
 *
 * The controller reads its pods from two caches fed by two watches: whole pods with our marker
 * label, metadata of the rest. When someone removes the marker from a pod a set controls, the first
 * watch reports the pod gone before (or after) the second reports it added; in between the pod is in
 * neither cache, and a sync would count one pod too few and create a replacement. So a set with a
 * departed pod does not create or delete until the pod arrived in the other cache, or `graceMs`
 * passed (then it really is gone, e.g. deleted with no grace period). Waits are therefore bounded.
 */
export class Departures {
  private readonly byUid = new Map<string, { key: string; until: number }>();
  private readonly graceMs: number;
  private readonly now: () => number;

  constructor(graceMs = 3000, now: () => number = Date.now) {
    this.graceMs = graceMs;
    this.now = now;
  }

  /** The pod with `uid`, controlled by the set `key`, left the pod cache while not terminating. */
  departed(key: string, uid: string): void {
    this.byUid.set(uid, { key, until: this.now() + this.graceMs });
  }

  /** The pod showed up in one of the caches again. */
  arrived(uid: string): void {
    this.byUid.delete(uid);
  }

  /** Milliseconds the set `key` should still wait for a departed pod to arrive; 0 when none. */
  waitFor(key: string): number {
    const now = this.now();
    let wait = 0;
    for (const [uid, entry] of this.byUid) {
      if (entry.until <= now) this.byUid.delete(uid);
      else if (entry.key === key) wait = Math.max(wait, entry.until - now);
    }
    return wait;
  }

  /** Forgets the set `key` (it was deleted). */
  forget(key: string): void {
    for (const [uid, entry] of this.byUid) if (entry.key === key) this.byUid.delete(uid);
  }

  get size(): number {
    return this.byUid.size;
  }
}

/**
 * Whether a pod that left the controller's pod cache may only have lost our marker label (and is on
 * its way into the other cache), rather than be gone: not if it was terminating or finished, nor if
 * the set itself asked for its deletion (a pod deleted at once, as an unscheduled one is, leaves
 * without ever showing a deletion timestamp).
 */
export function mayHaveLostMarker(pod: CachedPod, deletionExpected: boolean): boolean {
  return !deletionExpected && !pod.metadata?.deletionTimestamp && !isPodFinished(pod);
}
