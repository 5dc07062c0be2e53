import { BASIC_DEPLOYMENT, type BasicDeployment, REVISION_ANNOTATION } from '../../apis/index.ts';
import { OwnWrites } from '../../runtime/cache/own-writes.ts';
import type { KubeClient } from '../../runtime/client/kube-client.ts';
import { objectKey } from '../../runtime/client/object.ts';
import { StatusWriteQueue } from '../../runtime/write/status-queue.ts';

export interface RevisionWriterOptions {
  client: KubeClient;
  /** A write failed: the deployment is reconciled again, which hands its revision over again. */
  onError(key: string, err: unknown): void;
}

/**
 * Records the current set's revision on its deployment (the revision annotation, as
 * kube-controller-manager records it on a Deployment) in the background, in the low lane of the
 * client's rate limit. The annotation reports which set is current: nothing decides on it (the
 * sets carry the revisions that rollouts and rollbacks use), so, like a status, it waits for the
 * set and pod creates of a large rollout instead of taking their share of the budget. A reconcile
 * hands the revision over and goes on.
 *
 * Handing over the same revision again while it waits or before the cache shows it written sends
 * nothing more; a newer revision replaces one still waiting (the queue's latest wins).
 */
export class RevisionWriter {
  readonly #client: KubeClient;
  readonly #queue: StatusWriteQueue;
  /** Per deployment, the revision handed over and not yet written, and the reconcile's signal. */
  readonly #waiting = new Map<string, { revision: string; signal: AbortSignal }>();
  readonly #written = new OwnWrites();

  constructor(options: RevisionWriterOptions) {
    this.#client = options.client;
    this.#queue = new StatusWriteQueue({ onError: options.onError });
  }

  /** `signal`: the reconcile's; a write not yet sent when the controller stops is dropped. */
  record(d: BasicDeployment, revision: string, signal: AbortSignal): void {
    if (d.metadata.annotations?.[REVISION_ANNOTATION] === revision) return;
    // The event of our own write is on its way, and brings the deployment back (annotations are
    // watched) with a newer revision to record if one is due.
    if (this.#written.isBehind(d)) return;
    const key = objectKey(d);
    const waiting = this.#waiting.get(key);
    // A write whose controller stopped before it was sent is dropped: it no longer counts.
    if (waiting?.revision === revision && !waiting.signal.aborted) return;
    const entry = { revision, signal };
    this.#waiting.set(key, entry);
    this.#queue.submit(key, {
      lane: 'urgent',
      signal,
      run: async (writeSignal) => {
        try {
          const written = await this.#client.patch(BASIC_DEPLOYMENT, {
            namespace: d.metadata.namespace,
            name: d.metadata.name ?? '',
            patchType: 'merge',
            body: { metadata: { annotations: { [REVISION_ANNOTATION]: revision } } },
            priority: 'low',
            signal: writeSignal,
          });
          this.#written.wrote(d, written);
        } finally {
          if (this.#waiting.get(key) === entry) this.#waiting.delete(key);
        }
      },
    });
  }

  /** Resolves once nothing waits and nothing is in flight. */
  drain(): Promise<void> {
    return this.#queue.drain();
  }
}
