/**
 * Pods this controller adopted or marked and that its pod cache has not seen arrive yet.
 *
 * The controller's pod cache holds only pods with our marker label, so a pod it adopts (or marks
 * again) arrives in that cache as an add, like a pod it created, and the claim records a creation
 * expectation for it. An add that is already terminating normally counts as a deletion only
 * (upstream addPod); for a claimed pod the arrival must still be counted, or the expectation would
 * wait for its timeout. Claims are noted here before their patch is sent and taken out by the add
 * handler. Entries the cache never reports expire after `ttlMs`, so the map stays bounded.
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
