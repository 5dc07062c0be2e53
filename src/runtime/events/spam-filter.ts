import type { V1ObjectReference } from '@kubernetes/client-node';
import { type Clock, realClock } from '../queue/clock.ts';
import { TokenBucket } from '../queue/token-bucket.ts';
import { referenceKey } from './aggregation.ts';

/**
 * client-go's EventSourceObjectSpamFilter: a token bucket per regarding object, so one object stuck
 * in a hot loop cannot flood the API server with events. Occurrences beyond the bucket are dropped,
 * not delayed (an event that arrives an hour late is noise).
 */

/** client-go defaults: 25 events at once, then one every 5 minutes. */
export const DEFAULT_SPAM_BURST = 25;
export const DEFAULT_SPAM_REFILL_PER_SECOND = 1 / 300;
/** Objects tracked at most (client-go's LRU size); the least recently seen are forgotten first. */
export const DEFAULT_SPAM_MAX_OBJECTS = 4096;

export interface EventSpamFilterOptions {
  burst?: number;
  refillPerSecond?: number;
  maxObjects?: number;
  clock?: Clock;
}

export class EventSpamFilter {
  readonly #buckets = new Map<string, TokenBucket>();
  readonly #burst: number;
  readonly #refillPerSecond: number;
  readonly #maxObjects: number;
  readonly #clock: Clock;

  constructor(options: EventSpamFilterOptions = {}) {
    this.#burst = options.burst ?? DEFAULT_SPAM_BURST;
    this.#refillPerSecond = options.refillPerSecond ?? DEFAULT_SPAM_REFILL_PER_SECOND;
    this.#maxObjects = options.maxObjects ?? DEFAULT_SPAM_MAX_OBJECTS;
    this.#clock = options.clock ?? realClock;
  }

  /** Takes a token for `regarding`; false (drop the event) when its bucket is empty. */
  allow(regarding: V1ObjectReference): boolean {
    const key = referenceKey(regarding);
    let bucket = this.#buckets.get(key);
    if (bucket) {
      this.#buckets.delete(key); // re-inserted below: Map order is least recently used first
    } else {
      bucket = new TokenBucket(this.#refillPerSecond, this.#burst, this.#clock);
    }
    this.#buckets.set(key, bucket);
    this.#evictOverflow();
    if (bucket.available() < 1) return false;
    bucket.take();
    return true;
  }

  /** Objects currently tracked. */
  get size(): number {
    return this.#buckets.size;
  }

  #evictOverflow(): void {
    for (const key of this.#buckets.keys()) {
      if (this.#buckets.size <= this.#maxObjects) return;
      this.#buckets.delete(key);
    }
  }
}
