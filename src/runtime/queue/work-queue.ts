import { type Clock, type ClockTimer, realClock } from './clock.ts';
import { DelayHeap } from './delay-heap.ts';
import { Fifo } from './fifo.ts';
import { noopQueueMetrics, type QueueMetrics } from './metrics.ts';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiters.ts';

export interface WorkQueueOptions<T extends string> {
  /** Per-item and overall requeue limits for addRateLimited. Default: defaultControllerRateLimiter(). */
  rateLimiter?: RateLimiter<T>;
  /** Default: no metrics. See createPrometheusQueueMetrics. */
  metrics?: QueueMetrics<T>;
  clock?: Clock;
}

/**
 * A work queue of reconcile keys with client-go's guarantees:
 * - an item is queued at most once however often it is added (dirty set);
 * - an item is never handed to two workers at once: added while being processed, it waits and is
 *   queued again (once) when done() is called for it;
 * - addAfter/addRateLimited delay an add (min-heap of waiting items; the earliest pending time wins).
 *
 * Workers loop on `get()`, process the item, and always call `done(item)`; then `forget(item)` on
 * success or `addRateLimited(item)` on failure.
 *
 * Deliberate difference from client-go: after shutdown, get() resolves undefined even if items are
 * still queued (client-go keeps handing them out). Controllers are level-triggered, so abandoned
 * keys are picked up again by the next start's initial list, and shutdown is not held up by a backlog.
 */
export class WorkQueue<T extends string = string> {
  readonly #rateLimiter: RateLimiter<T>;
  readonly #metrics: QueueMetrics<T>;
  readonly #clock: Clock;

  /** Order of handing out. Every queued item is dirty and not processing. */
  readonly #queue = new Fifo<T>();
  /** Items that need processing: queued, or added again while processing. */
  readonly #dirty = new Set<T>();
  /** Items a worker holds (between get() and done()). */
  readonly #processing = new Set<T>();
  /** Resolvers of get() calls waiting for an item, oldest first. */
  readonly #waitingWorkers = new Fifo<(item: T | undefined) => void>();

  readonly #delayed = new DelayHeap<T>();
  #delayTimer: ClockTimer | undefined;
  /** The ready time #delayTimer was armed for. */
  #delayTimerReadyAt = Number.POSITIVE_INFINITY;

  #shuttingDown = false;
  /** Resolvers of shutDownWithDrain calls, told whether the drain completed. */
  #drainWaiters: ((drained: boolean) => void)[] = [];

  constructor(options: WorkQueueOptions<T> = {}) {
    this.#clock = options.clock ?? realClock;
    this.#rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<T>(this.#clock);
    this.#metrics = options.metrics ?? noopQueueMetrics;
  }

  /** Marks `item` as needing processing. Ignored after shutdown. */
  add(item: T): void {
    if (this.#shuttingDown || this.#dirty.has(item)) return;
    this.#metrics.add(item);
    this.#dirty.add(item);
    // A worker holds it: done() will queue it, so no second worker can get it meanwhile.
    if (this.#processing.has(item)) return;
    this.#queue.push(item);
    this.#dispatch();
  }

  /**
   * Adds `item` once `delayMs` has passed. If it is already waiting for an earlier time, that time is
   * kept; if it waits for a later one, it is moved earlier.
   */
  addAfter(item: T, delayMs: number): void {
    if (this.#shuttingDown) return;
    this.#metrics.retry();
    if (!(delayMs > 0)) {
      this.add(item);
      return;
    }
    this.#delayed.schedule(item, this.#clock.now() + delayMs);
    this.#armDelayTimer();
  }

  /** Adds `item` after the delay the rate limiter assigns it (its requeue count goes up by one). */
  addRateLimited(item: T): void {
    this.addAfter(item, this.#rateLimiter.when(item));
  }

  /** Resets `item`'s backoff (call after a successful reconcile). Does not remove it from the queue. */
  forget(item: T): void {
    this.#rateLimiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.#rateLimiter.numRequeues(item);
  }

  /**
   * The next item to process, marked as in progress: the caller must call done(item) when finished.
   * Resolves undefined once the queue is shutting down; the worker should then exit.
   */
  get(): Promise<T | undefined> {
    if (this.#shuttingDown) return Promise.resolve(undefined);
    const item = this.#queue.shift();
    if (item !== undefined) return Promise.resolve(this.#handOut(item));
    return new Promise((resolve) => this.#waitingWorkers.push(resolve));
  }

  /** Ends processing of `item`; if it was added meanwhile, it is queued again. */
  done(item: T): void {
    if (!this.#processing.delete(item)) return;
    this.#metrics.done(item);
    if (this.#shuttingDown) {
      if (this.#processing.size === 0) this.#settleDrain(true);
      return;
    }
    if (this.#dirty.has(item)) {
      this.#queue.push(item);
      this.#dispatch();
    }
  }

  /** Items waiting to be handed out (not counting in-progress or delayed ones). */
  len(): number {
    return this.#queue.length;
  }

  /** Items currently held by workers. */
  inFlight(): number {
    return this.#processing.size;
  }

  /**
   * Stops the queue: later adds are ignored, delayed adds are dropped, and every pending and future
   * get() resolves undefined. Workers still holding items may call done(). Also ends a pending
   * shutDownWithDrain early (it then resolves false).
   */
  shutDown(): void {
    this.#beginShutdown();
    this.#settleDrain(this.#processing.size === 0);
  }

  /**
   * Shuts down like shutDown(), then waits until workers have called done() on every in-flight item,
   * or until `timeoutMs` passes. Resolves true if the queue drained, false on timeout.
   */
  shutDownWithDrain(timeoutMs: number): Promise<boolean> {
    this.#beginShutdown();
    if (this.#processing.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      // Unlike the queue's background timers this one keeps the process alive: the caller awaits this
      // bounded wait to run its remaining shutdown steps, which must not be skipped by an early exit.
      const timer = this.#clock.setTimeout(() => this.#settleDrain(false), timeoutMs, { keepAlive: true });
      this.#drainWaiters.push((drained) => {
        this.#clock.clearTimeout(timer);
        resolve(drained);
      });
    });
  }

  #beginShutdown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    this.#cancelDelayTimer();
    this.#delayed.clear();
    this.#queue.clear();
    this.#dirty.clear();
    for (let resolve = this.#waitingWorkers.shift(); resolve; resolve = this.#waitingWorkers.shift()) {
      resolve(undefined);
    }
  }

  #settleDrain(drained: boolean): void {
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const resolve of waiters) resolve(drained);
  }

  /** Hands queued items to workers blocked in get(). */
  #dispatch(): void {
    while (this.#waitingWorkers.length > 0 && this.#queue.length > 0) {
      const resolve = this.#waitingWorkers.shift()!;
      resolve(this.#handOut(this.#queue.shift()!));
    }
  }

  #handOut(item: T): T {
    this.#dirty.delete(item);
    this.#processing.add(item);
    this.#metrics.get(item);
    return item;
  }

  /** Keeps exactly one timer, due when the earliest delayed item becomes ready. */
  #armDelayTimer(): void {
    const readyAt = this.#delayed.nextReadyAt() ?? Number.POSITIVE_INFINITY;
    if (this.#delayTimer && this.#delayTimerReadyAt <= readyAt) return;
    this.#cancelDelayTimer();
    if (readyAt === Number.POSITIVE_INFINITY) return;
    this.#delayTimerReadyAt = readyAt;
    this.#delayTimer = this.#clock.setTimeout(() => {
      this.#delayTimer = undefined;
      for (const item of this.#delayed.popReady(this.#clock.now())) this.add(item);
      this.#armDelayTimer();
    }, readyAt - this.#clock.now());
  }

  #cancelDelayTimer(): void {
    if (this.#delayTimer) this.#clock.clearTimeout(this.#delayTimer);
    this.#delayTimer = undefined;
  }
}
