import { Fifo } from '../queue/fifo.ts';

/**
 * `urgent` writes report what a reader must act on (a condition changes, a count goes down, a new
 * generation is observed); `progress` writes only report more of the same good news.
 */
export type StatusWriteLane = 'urgent' | 'progress';

export interface StatusWrite {
  lane: StatusWriteLane;
  /** Sends the write; the signal is aborted when the owner stops or loses leadership. */
  run(signal: AbortSignal): Promise<void>;
  signal: AbortSignal;
}

export interface StatusWriteQueueOptions {
  /** Writes in flight at most. */
  concurrency?: number;
  /** Called once a write failed; the owner reconciles the key again, which submits a fresh write. */
  onError: (key: string, err: unknown) => void;
}

export const DEFAULT_STATUS_WRITE_CONCURRENCY = 2;

/**
 * Status writes that reconcilers hand over instead of waiting for: a worker goes on to the next key
 * (creating pods, say) while its status is sent in the background.
 *
 * - **Latest wins**: a key has at most one write waiting; submitting again replaces it, so a status
 *   that changed three times while the API server was busy costs one write, not three. Under load
 *   the writes coalesce more, which is when saving them matters.
 * - **One write per key at a time**, in submission order, so an older status never lands after a
 *   newer one.
 * - **Two lanes**: urgent writes go before progress-only ones; a key moved to urgent keeps its place
 *   in the urgent lane.
 * - Bounded concurrency; a write whose signal is aborted (the controller stopped) is dropped, since
 *   whoever reconciles next recomputes it.
 */
export class StatusWriteQueue {
  readonly #concurrency: number;
  readonly #onError: (key: string, err: unknown) => void;
  readonly #waiting = new Map<string, StatusWrite>();
  readonly #lanes: Record<StatusWriteLane, Fifo<string>> = { urgent: new Fifo(), progress: new Fifo() };
  /** The lane each queued key is in; a key may also have stale entries, which are skipped. */
  readonly #queuedIn = new Map<string, StatusWriteLane>();
  readonly #inFlight = new Set<string>();
  #idleWaiters: (() => void)[] = [];
  readonly #keyWaiters = new Map<string, (() => void)[]>();

  constructor(options: StatusWriteQueueOptions) {
    this.#concurrency = options.concurrency ?? DEFAULT_STATUS_WRITE_CONCURRENCY;
    if (!Number.isInteger(this.#concurrency) || this.#concurrency < 1) {
      throw new Error(`status write concurrency must be a whole number >= 1, got ${this.#concurrency}`);
    }
    this.#onError = options.onError;
  }

  submit(key: string, write: StatusWrite): void {
    const previous = this.#waiting.get(key);
    const lane: StatusWriteLane =
      write.lane === 'urgent' || previous?.lane === 'urgent' ? 'urgent' : 'progress';
    this.#waiting.set(key, { ...write, lane });
    // A key in flight is queued again when its write finishes.
    if (!this.#inFlight.has(key)) this.#queue(key, lane);
    this.#pump();
  }

  /** Drops the waiting write of `key` (its object is gone). */
  forget(key: string): void {
    this.#waiting.delete(key);
    this.#queuedIn.delete(key);
    this.#settle(key);
  }

  /** Resolves once `key` has no write waiting and none in flight (written, failed or dropped). */
  settled(key: string): Promise<void> {
    if (!this.#waiting.has(key) && !this.#inFlight.has(key)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.#keyWaiters.get(key);
      if (waiters) waiters.push(resolve);
      else this.#keyWaiters.set(key, [resolve]);
    });
  }

  /** Whether a write of `key` waits to be sent (not counting one in flight). */
  isWaiting(key: string): boolean {
    return this.#waiting.has(key);
  }

  /** Writes waiting (not counting those in flight). */
  get pending(): number {
    return this.#waiting.size;
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Resolves once nothing waits and nothing is in flight. */
  drain(): Promise<void> {
    if (this.#waiting.size === 0 && this.#inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #queue(key: string, lane: StatusWriteLane): void {
    if (this.#queuedIn.get(key) === lane) return;
    this.#queuedIn.set(key, lane);
    this.#lanes[lane].push(key);
  }

  #next(): string | undefined {
    for (const lane of ['urgent', 'progress'] as const) {
      const fifo = this.#lanes[lane];
      for (let key = fifo.shift(); key !== undefined; key = fifo.shift()) {
        if (this.#queuedIn.get(key) !== lane) continue; // stale entry: moved lanes or forgotten
        this.#queuedIn.delete(key);
        return key;
      }
    }
    return undefined;
  }

  #pump(): void {
    while (this.#inFlight.size < this.#concurrency) {
      const key = this.#next();
      if (key === undefined) break;
      const write = this.#waiting.get(key)!;
      this.#waiting.delete(key);
      if (write.signal.aborted) {
        this.#settle(key);
        continue;
      }
      this.#inFlight.add(key);
      void this.#run(key, write);
    }
    if (this.#waiting.size === 0 && this.#inFlight.size === 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  #settle(key: string): void {
    if (this.#waiting.has(key) || this.#inFlight.has(key)) return;
    const waiters = this.#keyWaiters.get(key);
    if (!waiters) return;
    this.#keyWaiters.delete(key);
    for (const resolve of waiters) resolve();
  }

  async #run(key: string, write: StatusWrite): Promise<void> {
    try {
      await write.run(write.signal);
    } catch (err) {
      if (!write.signal.aborted) {
        try {
          this.#onError(key, err);
        } catch {
          // A failing error handler must not stop the queue.
        }
      }
    } finally {
      this.#inFlight.delete(key);
      const again = this.#waiting.get(key);
      if (again) this.#queue(key, again.lane);
      else this.#settle(key);
      this.#pump();
    }
  }
}
