import type { KubeObject } from '../client/object.ts';

/** How long a write is remembered when the cache never shows the object again (it was deleted). */
const FORGET_AFTER_MS = 60_000;
/** Entries at which old ones are swept; far above the writes a controller has in flight. */
const SWEEP_AT = 1_000;

/**
 * Read-your-writes for a controller that writes objects it reads from a cache. A reconcile can start
 * after one of its writes returned and before the watch event of that write reached the cache (another
 * event woke it meanwhile); it then sees the object as it was before the write and would act on it
 * again, with a resourceVersion the server has already moved past (409). Remembering the version each
 * write replaced tells such a reconcile that its view is stale. Only equality is compared: a cache
 * showing that version is certainly behind, as resourceVersions are otherwise opaque.
 */
export class OwnWrites {
  /** Per object, the versions our writes replaced (a reconcile may write one object twice). */
  private readonly replaced = new Map<string, { versions: Set<string>; at: number }>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /** Records that a write turned `before` (as read) into `after` (the server's answer). */
  wrote(before: KubeObject, after: KubeObject | undefined): void {
    const resourceVersion = before.metadata?.resourceVersion;
    if (!resourceVersion || after?.metadata?.resourceVersion === resourceVersion) return;
    if (this.replaced.size >= SWEEP_AT) this.sweep();
    const key = keyOf(before);
    const entry = this.replaced.get(key);
    if (entry) {
      entry.versions.add(resourceVersion);
      entry.at = this.now();
    } else {
      this.replaced.set(key, { versions: new Set([resourceVersion]), at: this.now() });
    }
  }

  /** Whether `cached` is a version one of our writes has already replaced. */
  isBehind(cached: KubeObject): boolean {
    const key = keyOf(cached);
    const entry = this.replaced.get(key);
    if (!entry) return false;
    if (entry.versions.has(cached.metadata?.resourceVersion ?? '')) return true;
    this.replaced.delete(key); // the cache shows our last write, or later
    return false;
  }

  private sweep(): void {
    const cutoff = this.now() - FORGET_AFTER_MS;
    for (const [key, entry] of this.replaced) {
      if (entry.at < cutoff) this.replaced.delete(key);
    }
  }
}

function keyOf(obj: KubeObject): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}
