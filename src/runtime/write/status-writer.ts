import { isDeepStrictEqual } from 'node:util';
import { isNotFound } from '../client/errors.ts';
import type { KubeClient } from '../client/kube-client.ts';
import type { ResourceType } from '../client/resource.ts';
import { isProgressOnly } from './progress-only.ts';
import type { ObjectWithStatus, StatusOf } from './status.ts';
import { type StatusWriteLane, StatusWriteQueue } from './status-queue.ts';
import { type StatusStrategy, type StatusTarget, toJsonValue } from './status-strategy.ts';

/**
 * What a reconciler writes its object's status through (`ctx.status`). It hands the status over
 * and goes on: the runtime writes it in the background, skips it when the server already has it,
 * spaces out progress-only changes, retries a failed write by reconciling the object again, forgets
 * deleted objects and drains at shutdown.
 */
export interface StatusWriter<T extends ObjectWithStatus> {
  /**
   * The status `obj` has once what was handed over for it is written: the cache lags our own writes,
   * so a reconcile that computes the next status from the previous one (conditions, progress times)
   * reads it here, or two syncs in quick succession would each start from the cached one.
   */
  latest(obj: T): StatusOf<T> | undefined;
  /** Hands over the status this controller wants `obj` to have (latest wins). */
  write(obj: T, status: StatusOf<T>): void;
  /**
   * Sends what was handed over for `obj` now, even a progress write held for its interval, and
   * resolves once it is written or has failed (a failure reconciles `obj` again, as always). For a
   * reconciler about to let `obj` go (release its finalizer): once released, the object may be
   * gone before a background write of its last status is sent.
   */
  flush(obj: T): Promise<void>;
}

/** What the writer reads the object's latest cached state from (an Informer). */
export interface CachedObjects<T> {
  get(namespace: string | undefined, name: string): T | undefined;
}

/**
 * Changes that only report more of the same good news (these counts rise, no condition changes
 * what a reader decides on) are written at most once per interval; the latest one waits and is sent
 * when the interval is up. Every pod that becomes ready changes its owner's counts; writing each one
 * would cost an API call competing with creating pods. Delaying good news is always safe: readers
 * act on less progress than there is, never more.
 */
export interface ProgressOptions<S> {
  counts: readonly (keyof S)[];
  /** Condition reasons that only report progress (moving between them is progress too). */
  reasons?: ReadonlySet<string>;
  intervalMs: number;
  /**
   * A status that completes the work (every replica available): readers (the owner's controller,
   * `kubectl rollout status`) wait for it, so it is never held, for the interval or the batch period.
   */
  done?: (status: S) => boolean;
}

export interface BackgroundStatusWriterOptions<T extends ObjectWithStatus> {
  client: KubeClient;
  type: ResourceType<T>;
  cache: CachedObjects<T>;
  strategy: StatusStrategy;
  /** observedGeneration is set to the generation the status was computed from (default true). */
  setObservedGeneration?: boolean;
  /**
   * This writer is the status's only writer (the replace strategy): a status change it did not make
   * is someone else's edit, which the controller corrects (changedByOthers), as kube-controller-manager
   * does when a Deployment's status is patched by hand.
   */
  soleWriter?: boolean;
  progress?: ProgressOptions<StatusOf<T>>;
  /** Writes in flight at most. */
  concurrency?: number;
  /**
   * How long a status handed over waits before it is sent (default DEFAULT_STATUS_BATCH_MS); what is
   * handed over meanwhile replaces it. A reconcile hands its status over right after its writes to
   * children (a set scaled, pods created): the children's controllers react to those at once, and
   * their writes then reach the API server first instead of sharing it with the report of them. A
   * status that progress.done() says completes the work is sent at once.
   */
  batchMs?: number;
  /** Aborted when the controller stops: writes not yet sent are dropped. */
  signal: AbortSignal;
  /** A write failed: the owner reconciles the object again, which hands over a fresh status. */
  onError(key: string, err: unknown): void;
  now?: () => number;
}

/**
 * Long enough for the writes a change sets off (the owned object's controller reacting, its create
 * served) to go before the status reporting the change, and too short for anyone to see (a watch
 * event takes about as long). Upstream batches for the same reason, longer: kube-controller-manager's
 * Job controller syncs a Job at most once a second for its pods' events.
 */
export const DEFAULT_STATUS_BATCH_MS = 20;

interface Held {
  timer: NodeJS.Timeout;
  /** When it goes (this.#now() time). */
  at: number;
  lane: StatusWriteLane;
}

interface Submitted<S> {
  target: StatusTarget;
  status: S;
}

interface Written {
  uid: string | undefined;
  /** The cached resourceVersion when the write was sent: while the cache still shows it, it lags. */
  baseResourceVersion: string | undefined;
  /** The resourceVersion the write produced. */
  writtenResourceVersion: string | undefined;
  json: string;
}

/**
 * The runtime's one status writer (see StatusWriter), on its own StatusWriteQueue (latest wins per
 * key, urgent writes first, bounded concurrency). Nothing is sent when the object is gone or was
 * replaced (another uid), or when the server already has that status. After a write of ours the
 * server has what we sent, whatever the cache still shows: the next status is compared with what we
 * sent, and with the cache only when the cache shows neither our write nor the version we wrote
 * over (someone else wrote; writing again is at worst a no-op).
 */
export class BackgroundStatusWriter<T extends ObjectWithStatus> implements StatusWriter<T> {
  readonly #options: BackgroundStatusWriterOptions<T>;
  readonly #queue: StatusWriteQueue;
  readonly #now: () => number;
  readonly #batchMs: number;
  /** What was handed over and is not yet known to be in the cache. */
  readonly #submitted = new Map<string, Submitted<StatusOf<T>>>();
  readonly #written = new Map<string, Written>();
  /** When a write was last handed to the queue, per key (for the progress interval). */
  readonly #lastSent = new Map<string, number>();
  /** Writes waiting for the batch period, or progress-only ones for their interval. */
  readonly #held = new Map<string, Held>();
  /** A token per write in flight; forget() drops it, so that write then records nothing. */
  readonly #inFlight = new Map<string, object>();

  constructor(options: BackgroundStatusWriterOptions<T>) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#batchMs = options.batchMs ?? DEFAULT_STATUS_BATCH_MS;
    this.#queue = new StatusWriteQueue({ concurrency: options.concurrency, onError: options.onError });
    options.signal.addEventListener('abort', () => this.#clearAllHeld(), { once: true });
  }

  latest(obj: T): StatusOf<T> | undefined {
    const key = keyOf(obj);
    const submitted = this.#submitted.get(key);
    if (!submitted || submitted.target.uid !== obj.metadata?.uid) return this.#cachedStatus(obj);
    const { strategy } = this.#options;
    if (!this.#busy(key) && strategy.has(obj.status, submitted.status)) {
      this.#submitted.delete(key); // the cache has caught up: keep no second copy
      return obj.status as StatusOf<T>;
    }
    return strategy.overlay(obj.status, submitted.status) as StatusOf<T>;
  }

  write(obj: T, status: StatusOf<T>): void {
    if (this.#options.signal.aborted) return;
    const key = keyOf(obj);
    const previous = this.latest(obj);
    const next = this.#desired(obj, status);
    this.#submitted.set(key, {
      target: { namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '', uid: obj.metadata?.uid },
      status: next,
    });
    const progress = this.#options.progress;
    const done = progress?.done?.(next as StatusOf<T>) === true;
    const progressOnly =
      !done &&
      progress !== undefined &&
      previous !== undefined &&
      isProgressOnly(previous, next, progress.counts, progress.reasons);
    if (!progressOnly) {
      // Work done goes at once: no write of the work follows it to make way for, and readers wait for it.
      this.#sendAfter(key, 'urgent', done ? 0 : this.#batchMs);
      return;
    }
    const last = this.#lastSent.get(key);
    const hold = last === undefined ? 0 : last + progress.intervalMs - this.#now();
    this.#sendAfter(key, 'progress', Math.max(hold, this.#batchMs));
  }

  /** Sends `key` in `delayMs`, or sooner if it is held to go sooner; an urgent write stays urgent. */
  #sendAfter(key: string, lane: StatusWriteLane, delayMs: number): void {
    const now = this.#now();
    const held = this.#held.get(key);
    const at = Math.min(now + Math.max(delayMs, 0), held?.at ?? Number.POSITIVE_INFINITY);
    const goes: StatusWriteLane = lane === 'urgent' || held?.lane === 'urgent' ? 'urgent' : 'progress';
    if (held && held.at === at && held.lane === goes) return;
    this.#clearHeld(key);
    if (at <= now) {
      this.#send(key, goes);
      return;
    }
    const timer = setTimeout(() => this.#send(key, goes), at - now);
    timer.unref();
    this.#held.set(key, { timer, at, lane: goes });
  }

  /**
   * The cache shows `obj` as it is now. Once it shows what was handed over for it, and the write of
   * it, the writer lets its own copies go: between reconciles (a status write does not wake its own
   * controller) they would be a second copy of every status, and a stale one for latest() should
   * anyone else change the status later.
   */
  observed(obj: T): void {
    const key = keyOf(obj);
    if (this.#busy(key)) return;
    const uid = obj.metadata?.uid;
    const submitted = this.#submitted.get(key);
    if (
      submitted &&
      submitted.target.uid === uid &&
      this.#options.strategy.has(obj.status, submitted.status)
    ) {
      this.#submitted.delete(key);
    }
    const written = this.#written.get(key);
    // The cache holds our write and nothing newer was handed over: it alone says what the server has.
    const inCache =
      written !== undefined &&
      written.uid === uid &&
      written.writtenResourceVersion !== undefined &&
      written.writtenResourceVersion === obj.metadata?.resourceVersion;
    if (inCache && !this.#submitted.has(key)) this.#written.delete(key);
  }

  /**
   * Whether the update from `oldObj` to `obj` changed the status in a way this writer did not: not a
   * write of its own (in flight, or answered with this resourceVersion, or the status it handed
   * over). Only a sole writer can tell; with shared status it is never true.
   */
  changedByOthers(oldObj: T, obj: T): boolean {
    if (!this.#options.soleWriter) return false;
    if (isDeepStrictEqual(toJsonValue(oldObj.status ?? {}), toJsonValue(obj.status ?? {}))) return false;
    const key = keyOf(obj);
    // A write of ours under way: its watch event may come before its answer.
    if (this.#busy(key)) return false;
    const uid = obj.metadata?.uid;
    const written = this.#written.get(key);
    const writtenVersion = written?.writtenResourceVersion;
    if (
      written?.uid === uid &&
      writtenVersion !== undefined &&
      writtenVersion === obj.metadata?.resourceVersion
    ) {
      return false;
    }
    const submitted = this.#submitted.get(key);
    return !(
      submitted &&
      submitted.target.uid === uid &&
      this.#options.strategy.has(obj.status, submitted.status)
    );
  }

  /**
   * `obj`'s status as the cache has it now. A reconcile's copy of `obj` may be older than the cache,
   * which may already show a write the writer has since let go of (observed()).
   */
  #cachedStatus(obj: T): StatusOf<T> | undefined {
    const current = this.#options.cache.get(obj.metadata?.namespace, obj.metadata?.name ?? '');
    return (current?.metadata?.uid === obj.metadata?.uid ? current : obj)?.status as StatusOf<T> | undefined;
  }

  flush(obj: T): Promise<void> {
    const key = keyOf(obj);
    if (this.#held.has(key)) this.#send(key, 'urgent');
    return this.#queue.settled(key);
  }

  /** Forgets `key`: its object is gone. */
  forget(key: string): void {
    this.#clearHeld(key);
    this.#submitted.delete(key);
    this.#written.delete(key);
    this.#lastSent.delete(key);
    this.#inFlight.delete(key);
    this.#queue.forget(key);
  }

  /**
   * Sends the writes held back (for the batch period or a progress interval) now, and resolves once
   * nothing is left to send.
   */
  drain(): Promise<void> {
    for (const [key, { lane }] of [...this.#held]) this.#send(key, lane);
    return this.#queue.drain();
  }

  /** Writes waiting for the queue or for their interval, and writes in flight (for tests and metrics). */
  get pending(): number {
    return this.#queue.pending + this.#queue.inFlight + this.#held.size;
  }

  #desired(obj: T, status: StatusOf<T>): StatusOf<T> {
    const computed = toJsonValue(status) as StatusOf<T>;
    const generation = obj.metadata?.generation;
    if (this.#options.setObservedGeneration === false || generation === undefined) return computed;
    return { ...computed, observedGeneration: generation };
  }

  /** A write of `key` is held, waiting or in flight: what was handed over may not be on the server yet. */
  #busy(key: string): boolean {
    return this.#held.has(key) || this.#queue.isWaiting(key) || this.#inFlight.has(key);
  }

  #clearHeld(key: string): void {
    const held = this.#held.get(key);
    if (!held) return;
    clearTimeout(held.timer);
    this.#held.delete(key);
  }

  #clearAllHeld(): void {
    for (const { timer } of this.#held.values()) clearTimeout(timer);
    this.#held.clear();
  }

  #send(key: string, lane: StatusWriteLane): void {
    this.#clearHeld(key);
    this.#lastSent.set(key, this.#now());
    this.#queue.submit(key, { lane, signal: this.#options.signal, run: (s) => this.#run(key, s) });
  }

  async #run(key: string, signal: AbortSignal): Promise<void> {
    const submitted = this.#submitted.get(key);
    if (!submitted) return;
    const { client, type, cache, strategy } = this.#options;
    const { target, status: next } = submitted;
    const current = cache.get(target.namespace, target.name);
    if (!current || current.metadata?.uid !== target.uid) {
      this.#written.delete(key);
      return;
    }
    if (this.#serverHas(key, current, next)) {
      this.observed(current);
      return;
    }
    const token = {};
    this.#inFlight.set(key, token);
    try {
      const written = await strategy.send(client, type, target, next, signal);
      if (this.#inFlight.get(key) !== token) return; // forgotten meanwhile: its object is gone
      this.#written.set(key, {
        uid: target.uid,
        baseResourceVersion: current.metadata?.resourceVersion,
        writtenResourceVersion: written.metadata?.resourceVersion,
        json: JSON.stringify(next),
      });
    } catch (err) {
      if (!isNotFound(err)) throw err; // gone: nothing to report on
    } finally {
      if (this.#inFlight.get(key) === token) this.#inFlight.delete(key);
    }
    // The watch event of the write may have come before its response.
    const now = cache.get(target.namespace, target.name);
    if (now) this.observed(now);
  }

  /** Whether the server already has `next` as (part of) the status of `current` (same uid). */
  #serverHas(key: string, current: T, next: StatusOf<T>): boolean {
    const cacheHasIt = this.#options.strategy.has(current.status, next);
    const last = this.#written.get(key);
    if (!last || last.uid !== current.metadata?.uid) return cacheHasIt;
    if (JSON.stringify(next) !== last.json) return false; // the server has what we sent last
    const rv = current.metadata?.resourceVersion;
    return cacheHasIt || rv === last.baseResourceVersion || rv === last.writtenResourceVersion;
  }
}

function keyOf(obj: ObjectWithStatus): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}
