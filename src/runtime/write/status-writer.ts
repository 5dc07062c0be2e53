import type { KubeClient } from '../client/kube-client.ts';
import type { ResourceType } from '../client/resource.ts';
import { errorMessage, type Logger } from '../log.ts';
import {
  desiredStatus,
  type ObjectWithStatus,
  patchWholeStatus,
  type StatusOf,
  statusChanged,
} from './status.ts';
import { type StatusWriteLane, StatusWriteQueue } from './status-queue.ts';

/** What the writer reads the object's latest cached state from (an Informer). */
export interface CachedObjects<T> {
  get(namespace: string | undefined, name: string): T | undefined;
}

export interface BackgroundStatusWriterOptions<T extends ObjectWithStatus> {
  client: KubeClient;
  type: ResourceType;
  cache: CachedObjects<T>;
  queue: StatusWriteQueue;
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
 * Hands a reconcile's status to a StatusWriteQueue and sends it when its turn comes, as updateStatus
 * would (a uid-guarded JSON Patch of the whole status). Nothing is sent when the object is gone or
 * was replaced (another uid), or when the server already has that status. This controller is the
 * single writer of the status, so after a write of ours the server has what we sent, whatever the
 * cache (which lags our own writes) still shows: the next status is compared with what we sent, and
 * with the cache only when the cache shows neither our write nor the version we wrote over (someone
 * else wrote; writing again is at worst a no-op). observedGeneration is the generation the status was
 * computed from, not the latest.
 */
export class BackgroundStatusWriter<T extends ObjectWithStatus> {
  readonly #options: BackgroundStatusWriterOptions<T>;
  readonly #written = new Map<string, Written>();
  /** The status last handed over per key (with its object's uid): what the server is about to have. */
  readonly #submitted = new Map<string, { uid: string | undefined; status: StatusOf<T> }>();
  /** A token per write in flight; forget() drops it, so that write then records nothing. */
  readonly #inFlight = new Map<string, object>();

  constructor(options: BackgroundStatusWriterOptions<T>) {
    this.#options = options;
  }

  submit(obj: T, status: StatusOf<T>, lane: StatusWriteLane, signal: AbortSignal): void {
    const next = desiredStatus(obj, () => status);
    this.#submitted.set(keyOf(obj), { uid: obj.metadata?.uid, status: next });
    this.#options.queue.submit(keyOf(obj), { lane, signal, run: (s) => this.#write(obj, next, s) });
  }

  /**
   * The status of `obj` as this writer's last submit left it, which the cache shows only once the
   * write is done and watched back; the cached status when nothing was submitted for this object.
   * A reconcile that computes the next status from the previous one (conditions, progress times)
   * reads it here: two syncs in quick succession would otherwise each start from the cached one and
   * the second undo the first (upstream's UpdateStatus fails on a stale resourceVersion instead).
   */
  latestStatus(obj: T): StatusOf<T> | undefined {
    const submitted = this.#submitted.get(keyOf(obj));
    return submitted && submitted.uid === obj.metadata?.uid ? submitted.status : obj.status;
  }

  /** Forgets `obj`'s key: its object is gone. */
  forget(key: string): void {
    this.#submitted.delete(key);
    this.#written.delete(key);
    this.#inFlight.delete(key);
    this.#options.queue.forget(key);
  }

  async #write(obj: T, next: StatusOf<T>, signal: AbortSignal): Promise<void> {
    const { client, type, cache } = this.#options;
    const key = keyOf(obj);
    const current = cache.get(obj.metadata?.namespace, obj.metadata?.name ?? '');
    const uid = obj.metadata?.uid;
    if (!current || current.metadata?.uid !== uid) {
      this.#written.delete(key);
      return;
    }
    if (this.#serverHas(key, current, next)) return;
    const token = {};
    this.#inFlight.set(key, token);
    try {
      const written = await patchWholeStatus(client, type, obj, next, { signal });
      if (this.#inFlight.get(key) !== token) return; // forgotten meanwhile: its object is gone
      this.#written.set(key, {
        uid,
        baseResourceVersion: current.metadata?.resourceVersion,
        writtenResourceVersion: written.metadata?.resourceVersion,
        json: JSON.stringify(next),
      });
    } finally {
      if (this.#inFlight.get(key) === token) this.#inFlight.delete(key);
    }
  }

  /** Whether the server already has `next` as the status of `current` (same uid). */
  #serverHas(key: string, current: T, next: StatusOf<T>): boolean {
    const cacheHasIt = !statusChanged(current.status, next);
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

/** What createStatusWriter needs from the controller the writer belongs to. */
export interface StatusWriterOwner {
  retryKey(key: string): void;
  onStop(hook: () => Promise<void>): void;
}

/**
 * A BackgroundStatusWriter on its own queue, for one controller. The controller is created after its
 * reconciler (which holds the writer), so it is attached afterwards: a failed write is logged and
 * its key reconciled again with backoff, and stopping the controller drains the writes first.
 */
export function createStatusWriter<T extends ObjectWithStatus>(options: {
  client: KubeClient;
  type: ResourceType;
  cache: CachedObjects<T>;
  log: Logger;
  concurrency?: number;
}): { writer: BackgroundStatusWriter<T>; attach(owner: StatusWriterOwner): void } {
  let owner: StatusWriterOwner | undefined;
  const queue = new StatusWriteQueue({
    concurrency: options.concurrency,
    onError: (key, err) => {
      options.log.warn('status write failed, will retry', { key, error: errorMessage(err) });
      owner?.retryKey(key);
    },
  });
  const writer = new BackgroundStatusWriter({ ...options, queue });
  return {
    writer,
    attach(o) {
      owner = o;
      o.onStop(() => queue.drain());
    },
  };
}
