import type { BasicDeployment } from '../../apis/index.ts';

/**
 * status.collisionCount as this controller knows it. The count is written only through the
 * computed status (by the background status writer, the single writer of the status), and the cache
 * may still show an older count after a bump, so the bumped count is remembered here (per deployment
 * uid) and the higher of the two is used: a stale copy can never take the count back down.
 */
export class CollisionCounts {
  readonly #bumped = new Map<string, { uid: string; count: number }>();

  /** The count to hash with and to report: undefined while no collision was ever seen. */
  current(d: BasicDeployment): number | undefined {
    return higherCollisionCount(d.status?.collisionCount, this.#remembered(d));
  }

  /** Records a collision at `seen`; returns the count to retry with. */
  bump(d: BasicDeployment, seen: number): number {
    const count = Math.max(seen + 1, this.current(d) ?? 0);
    this.#bumped.set(keyOf(d), { uid: d.metadata.uid ?? '', count });
    return count;
  }

  forget(key: string): void {
    this.#bumped.delete(key);
  }

  #remembered(d: BasicDeployment): number | undefined {
    const entry = this.#bumped.get(keyOf(d));
    return entry && entry.uid === (d.metadata.uid ?? '') ? entry.count : undefined;
  }
}

/** The higher of the stored and the remembered count; undefined when neither exists. */
export function higherCollisionCount(
  stored: number | undefined,
  remembered: number | undefined,
): number | undefined {
  if (stored === undefined) return remembered;
  if (remembered === undefined) return stored;
  return Math.max(stored, remembered);
}

function keyOf(d: BasicDeployment): string {
  return `${d.metadata.namespace}/${d.metadata.name}`;
}
