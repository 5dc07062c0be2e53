import type { V1ObjectReference } from '@kubernetes/client-node';
import { type Clock, realClock } from '../queue/clock.ts';
import type { EventOccurrence, SeriesTiming } from './event-object.ts';

/**
 * Event aggregation in the manner of client-go's events broadcaster (tools/events): repeats of the
 * same occurrence are folded into one Event whose `series` counts them, instead of one Event each.
 * The state is in memory only; a restarted process starts new series.
 */

/** How long a series stays open after its latest occurrence. */
export const DEFAULT_SERIES_WINDOW_MS = 10 * 60 * 1000;
/** Open series remembered at most; the least recently seen are forgotten first. */
export const DEFAULT_MAX_SERIES = 4096;

/** Identifies the regarding object: by uid, or by its coordinates when it has none. */
export function referenceKey(regarding: V1ObjectReference): string {
  return (
    regarding.uid ||
    JSON.stringify([regarding.apiVersion, regarding.kind, regarding.namespace, regarding.name])
  );
}

/** Occurrences with the same key are the same event, repeated. */
export function aggregationKey(occurrence: EventOccurrence): string {
  return JSON.stringify([
    referenceKey(occurrence.regarding),
    occurrence.reason,
    occurrence.action,
    occurrence.type,
    occurrence.note,
  ]);
}

/** Whether an occurrence at nowMs continues a series last observed at lastObservedMs. */
export function continuesSeries(lastObservedMs: number, nowMs: number, windowMs: number): boolean {
  return nowMs - lastObservedMs <= windowMs;
}

/** One Event and the occurrences folded into it. Mutated as occurrences arrive. */
export interface EventSeriesState extends SeriesTiming {
  readonly key: string;
  readonly occurrence: EventOccurrence;
  /** Clock time (monotonic) of the latest occurrence. */
  lastObservedAt: number;
  /** Name of the Event once created on the server. */
  eventName?: string;
  /** The count the server's copy shows (0 before the Event exists). */
  writtenCount: number;
}

export interface EventAggregatorOptions {
  windowMs?: number;
  maxSeries?: number;
  clock?: Clock;
  /** Wall-clock time for the Event's timestamps. */
  wallClock?: () => Date;
}

export class EventAggregator {
  readonly #series = new Map<string, EventSeriesState>();
  readonly #windowMs: number;
  readonly #maxSeries: number;
  readonly #clock: Clock;
  readonly #wallClock: () => Date;

  constructor(options: EventAggregatorOptions = {}) {
    this.#windowMs = options.windowMs ?? DEFAULT_SERIES_WINDOW_MS;
    this.#maxSeries = options.maxSeries ?? DEFAULT_MAX_SERIES;
    this.#clock = options.clock ?? realClock;
    this.#wallClock = options.wallClock ?? (() => new Date());
  }

  /**
   * Folds `occurrence` into its open series (count + 1, new lastObserved), or opens a new series of
   * one when there is none or the last one closed (no occurrence within the window).
   */
  observe(occurrence: EventOccurrence): { series: EventSeriesState; isNew: boolean } {
    const key = aggregationKey(occurrence);
    const now = this.#clock.now();
    const wallNow = this.#wallClock();
    const open = this.#series.get(key);
    // Deleting and re-inserting keeps the Map in least-recently-observed-first order.
    this.#series.delete(key);
    if (open && continuesSeries(open.lastObservedAt, now, this.#windowMs)) {
      open.count += 1;
      open.lastObserved = wallNow;
      open.lastObservedAt = now;
      this.#series.set(key, open);
      return { series: open, isNew: false };
    }
    const series: EventSeriesState = {
      key,
      occurrence,
      count: 1,
      firstObserved: wallNow,
      lastObserved: wallNow,
      lastObservedAt: now,
      writtenCount: 0,
    };
    this.#series.set(key, series);
    this.#evict(now);
    return { series, isNew: true };
  }

  /** Open series currently remembered. */
  get size(): number {
    return this.#series.size;
  }

  #evict(now: number): void {
    for (const [key, series] of this.#series) {
      const overfull = this.#series.size > this.#maxSeries;
      if (!overfull && continuesSeries(series.lastObservedAt, now, this.#windowMs)) break;
      this.#series.delete(key);
    }
  }
}
