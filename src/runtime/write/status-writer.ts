import type { KubeClient } from '../client/kube-client.ts';
import type { ResourceType } from '../client/resource.ts';
import { errorMessage, type Logger } from '../log.ts';
import {
  desiredStatus,
  type ObjectWithStatus,
  type StatusOf,
  statusChanged,
  statusReplacePatch,
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
  /** The cached resourceVersion the write was compared with: while the cache still shows it, it lags. */
  baseResourceVersion: string | undefined;
  json: string;
}

/**
 * Hands a reconcile's status to a StatusWriteQueue and sends it when its turn comes, as updateStatus
 * would (a uid-guarded JSON Patch of the whole status), comparing with the cache at that moment:
 * - nothing is sent when the object is gone or was replaced (another uid), or when the cache already
 *   holds that status;
 * - nor when this writer sent the same status and the cache has not caught up with it yet.
 * observedGeneration is the generation the status was computed from, not the latest.
 */
export class BackgroundStatusWriter<T extends ObjectWithStatus> {
  readonly #options: BackgroundStatusWriterOptions<T>;
  readonly #written = new Map<string, Written>();

  constructor(options: BackgroundStatusWriterOptions<T>) {
    this.#options = options;
  }

  submit(obj: T, status: StatusOf<T>, lane: StatusWriteLane, signal: AbortSignal): void {
    const next = desiredStatus(obj, () => status);
    this.#options.queue.submit(keyOf(obj), { lane, signal, run: (s) => this.#write(obj, next, s) });
  }

  /** Forgets `obj`'s key: its object is gone. */
  forget(key: string): void {
    this.#written.delete(key);
    this.#options.queue.forget(key);
  }

  async #write(obj: T, next: StatusOf<T>, signal: AbortSignal): Promise<void> {
    const { client, type, cache } = this.#options;
    const key = keyOf(obj);
    const current = cache.get(obj.metadata?.namespace, obj.metadata?.name ?? '');
    const uid = obj.metadata?.uid;
    if (!current || current.metadata?.uid !== uid) return;
    const json = JSON.stringify(next);
    const last = this.#written.get(key);
    const rv = current.metadata?.resourceVersion;
    if (last && last.uid === uid && last.baseResourceVersion === rv && last.json === json) return;
    if (!statusChanged(current.status, next)) return;
    await client.patch<T>(
      type,
      obj.metadata?.namespace,
      obj.metadata?.name ?? '',
      'json',
      statusReplacePatch(obj, next),
      {
        subresource: 'status',
        signal,
        priority: 'low',
      },
    );
    this.#written.set(key, { uid, baseResourceVersion: rv, json });
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
