import { Fifo } from '../queue/fifo.ts';

/**
 * A bounded queue of background writes, one at a time, keyed so that repeated requests for the same
 * key coalesce: a key already waiting is not queued twice (the write reads the latest state when it
 * runs), and a key enqueued while its write is running is written once more afterwards. Callers never
 * wait and never see an error: failures go to onError.
 */

export const DEFAULT_MAX_QUEUED_WRITES = 1000;

export interface WriteQueueOptions<T> {
  write: (item: T) => Promise<void>;
  onError?: (err: unknown, item: T) => void;
  /** Keys waiting at most; enqueue() refuses more. */
  maxQueued?: number;
}

export class CoalescingWriteQueue<T> {
  readonly #write: (item: T) => Promise<void>;
  readonly #onError: (err: unknown, item: T) => void;
  readonly #maxQueued: number;
  readonly #order = new Fifo<string>();
  /** Waiting keys and the item to write for each. */
  readonly #waiting = new Map<string, T>();
  #inFlight: string | undefined;
  /** Set when the in-flight key was enqueued again during its write. */
  #rewrite: T | undefined;
  #hasRewrite = false;
  #running = false;
  #idleWaiters: (() => void)[] = [];

  constructor(options: WriteQueueOptions<T>) {
    this.#write = options.write;
    this.#onError = options.onError ?? (() => {});
    this.#maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED_WRITES;
  }

  /** Schedules a write of `item` for `key`; false if it was refused (queue full). */
  enqueue(key: string, item: T): boolean {
    if (this.#waiting.has(key)) {
      this.#waiting.set(key, item);
      return true;
    }
    if (this.#inFlight === key) {
      this.#rewrite = item;
      this.#hasRewrite = true;
      return true;
    }
    if (this.#waiting.size >= this.#maxQueued) return false;
    this.#push(key, item);
    return true;
  }

  /** Keys waiting to be written (not counting the one being written). */
  get pending(): number {
    return this.#waiting.size;
  }

  /** Resolves once every write enqueued so far (and any rewrite they caused) has finished. */
  drain(): Promise<void> {
    if (!this.#running) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #push(key: string, item: T): void {
    this.#waiting.set(key, item);
    this.#order.push(key);
    if (!this.#running) {
      this.#running = true;
      void this.#run();
    }
  }

  async #run(): Promise<void> {
    for (let key = this.#order.shift(); key !== undefined; key = this.#order.shift()) {
      const item = this.#waiting.get(key) as T;
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
      if (this.#hasRewrite) {
        const again = this.#rewrite as T;
        this.#rewrite = undefined;
        this.#hasRewrite = false;
        this.#waiting.set(key, again);
        this.#order.push(key);
      }
    }
    this.#running = false;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
