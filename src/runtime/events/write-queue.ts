import { sleep } from '../cache/backoff.ts';
import { type Clock, realClock } from '../queue/clock.ts';
import { Fifo } from '../queue/fifo.ts';

/**
 * A bounded queue of background writes, one at a time, keyed so that repeated requests for the same
 * key coalesce: a key already waiting is not queued twice (the write reads the latest state when it
 * runs), and a key enqueued while its write is running is written once more afterwards. Each write
 * may wait a delay after its key is enqueued. Callers never wait and never see an error: failures
 * go to onError.
 */

export const DEFAULT_MAX_QUEUED_WRITES = 1000;

/** An item to write and when it may be written (clock time). */
interface Entry<T> {
  item: T;
  dueAt: number;
}

export interface WriteQueueOptions<T> {
  write: (item: T) => Promise<void>;
  onError?: (err: unknown, item: T) => void;
  /** Keys waiting at most; enqueue() refuses more. */
  maxQueued?: number;
  /** How long a key waits after it is enqueued before it is written (default 0: at once). */
  delayMs?: number;
  clock?: Clock;
}

export class CoalescingWriteQueue<T> {
  readonly #write: (item: T) => Promise<void>;
  readonly #onError: (err: unknown, item: T) => void;
  readonly #maxQueued: number;
  readonly #delayMs: number;
  readonly #clock: Clock;
  readonly #order = new Fifo<string>();
  readonly #waiting = new Map<string, Entry<T>>();
  #inFlight: string | undefined;
  /** Set when the in-flight key was enqueued again during its write. */
  #rewrite: Entry<T> | undefined;
  #running = false;
  /** Aborted by drain(): until the queue is idle again, no write waits for its delay. */
  #draining = new AbortController();
  #idleWaiters: (() => void)[] = [];

  constructor(options: WriteQueueOptions<T>) {
    this.#write = options.write;
    this.#onError = options.onError ?? (() => {});
    this.#maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED_WRITES;
    this.#delayMs = options.delayMs ?? 0;
    this.#clock = options.clock ?? realClock;
  }

  /** Schedules a write of `item` for `key`; false if it was refused (queue full). */
  enqueue(key: string, item: T): boolean {
    const waiting = this.#waiting.get(key);
    if (waiting) {
      waiting.item = item;
      return true;
    }
    if (this.#inFlight === key) {
      this.#rewrite = { item, dueAt: this.#rewrite?.dueAt ?? this.#dueAt() };
      return true;
    }
    if (this.#waiting.size >= this.#maxQueued) return false;
    this.#push(key, { item, dueAt: this.#dueAt() });
    return true;
  }

  /** Keys waiting to be written (not counting the one being written). */
  get pending(): number {
    return this.#waiting.size;
  }

  /**
   * Resolves once every write enqueued so far (and any rewrite they caused) has finished. Writes
   * still waiting for their delay go at once.
   */
  drain(): Promise<void> {
    if (!this.#running) return Promise.resolve();
    this.#draining.abort();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #dueAt(): number {
    return this.#clock.now() + this.#delayMs;
  }

  #push(key: string, entry: Entry<T>): void {
    this.#waiting.set(key, entry);
    this.#order.push(key);
    if (!this.#running) {
      this.#running = true;
      void this.#run();
    }
  }

  async #run(): Promise<void> {
    for (let key = this.#order.shift(); key !== undefined; key = this.#order.shift()) {
      // In order: the keys behind this one were enqueued later, except a rewrite (pushed when its
      // write ends), which may wait a little past its delay.
      const wait = (this.#waiting.get(key)?.dueAt ?? 0) - this.#clock.now();
      if (wait > 0) await sleep(wait, this.#draining.signal, this.#clock);
      const { item } = this.#waiting.get(key) as Entry<T>;
      this.#waiting.delete(key);
      this.#inFlight = key;
      try {
        await this.#write(item);
      } catch (err) {
        try {
          this.#onError(err, item);
        } catch {
          // A failing error handler must not stop the queue.
        }
      }
      this.#inFlight = undefined;
      if (this.#rewrite) {
        this.#push(key, this.#rewrite);
        this.#rewrite = undefined;
      }
    }
    this.#running = false;
    if (this.#draining.signal.aborted) this.#draining = new AbortController();
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
