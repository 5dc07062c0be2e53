/**
 * Pods this controller adopted or marked and that its pod cache has not seen arrive yet.
 *
 * The controller's pod cache holds only pods with our marker label. A pod the controller adopts (or
 * re-marks) therefore arrives in that cache as an add, exactly like a pod it created. Counting that
 * arrival as an observed creation would satisfy a creation expectation too early, and the next sync
 * would act on a cache that still misses a new pod. So claims are noted here before their patch is
 * sent, and the add handler takes them out instead of counting a creation. Entries the cache never
 * reports (the pod went away first) expire after `ttlMs`, so the set stays bounded.
 */
export class ClaimedArrivals {
  private readonly pending = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(ttlMs = 5 * 60_000, now: () => number = Date.now) {
    this.ttlMs = ttlMs;
    this.now = now;
  }

  /** The pod with this uid is about to be claimed. */
  expect(uid: string): void {
    this.prune();
    this.pending.set(uid, this.now() + this.ttlMs);
  }

  /** The claim did not happen: no arrival to wait for. */
  forget(uid: string): void {
    this.pending.delete(uid);
  }

  /** True (once) when the pod arriving in the cache is one this controller claimed. */
  take(uid: string): boolean {
    const expiry = this.pending.get(uid);
    if (expiry === undefined) return false;
    this.pending.delete(uid);
    return expiry >= this.now();
  }

  get size(): number {
    return this.pending.size;
  }

  private prune(): void {
    const now = this.now();
    for (const [uid, expiry] of this.pending) if (expiry < now) this.pending.delete(uid);
  }
}
