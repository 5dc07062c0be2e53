/**
 * Pods this controller adopted or marked and that its pod cache has not seen arrive yet, by uid and
 * by the set that claimed them.
 *
 * The controller's pod cache holds only pods with our marker label, so a pod it adopts (or marks
 * again) leaves the cache of the other pods and arrives in that cache as an add, like a pod it
 * created. In between it is in neither cache, and a sync would count one pod too few (and create a
 * replacement): so a set with a claimed pod on its way creates and deletes nothing until the pod
 * arrived. A claim is not a creation expectation (upstream's adoption is none): it is tracked by
 * the pod's uid, so a pod that two syncs see as an orphan (the second one before either cache
 * caught up) is awaited once, and its one arrival ends the wait. Claims are noted before their
 * patch is sent (the add can be handled before the patch's answer) and taken out by the add
 * handler. A claim whose arrival the cache never reports (lost in a relist) expires after `ttlMs`.
 */
export class ClaimedArrivals {
  private readonly pending = new Map<string, { key: string; until: number }>();
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(ttlMs = 5 * 60_000, now: () => number = Date.now) {
    this.ttlMs = ttlMs;
    this.now = now;
  }

  /**
   * The pod with this uid is about to be claimed by the set `key`: true. False, and nothing
   * recorded, when an earlier claim of it is still awaited: that claim's one arrival answers both.
   */
  expect(key: string, uid: string): boolean {
    this.prune();
    if (this.pending.has(uid)) return false;
    this.pending.set(uid, { key, until: this.now() + this.ttlMs });
    return true;
  }

  /** The claim that expect() answered true for wrote nothing (or failed): no arrival to wait for. */
  forget(uid: string): void {
    this.pending.delete(uid);
  }

  /** True (once) when the pod arriving in the cache is one this controller claimed. */
  take(uid: string): boolean {
    const entry = this.pending.get(uid);
    if (entry === undefined) return false;
    this.pending.delete(uid);
    return entry.until >= this.now();
  }

  /** Milliseconds the set `key` should still wait for pods it claimed to arrive; 0 when none. */
  waitFor(key: string): number {
    this.prune();
    let wait = 0;
    for (const entry of this.pending.values()) {
      if (entry.key === key) wait = Math.max(wait, entry.until - this.now());
    }
    return wait;
  }

  /** Forgets the claims of the set `key` (it was deleted). */
  forgetSet(key: string): void {
    for (const [uid, entry] of this.pending) if (entry.key === key) this.pending.delete(uid);
  }

  get size(): number {
    return this.pending.size;
  }

  private prune(): void {
    const now = this.now();
    for (const [uid, entry] of this.pending) if (entry.until < now) this.pending.delete(uid);
  }
}
