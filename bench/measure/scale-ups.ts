import { JitteredBackoff, sleep } from '../../src/runtime/cache/backoff.ts';
import type { KubeClient } from '../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../src/runtime/client/object.ts';
import type { ResourceType } from '../../src/runtime/client/resource.ts';
import { errorMessage } from '../../src/runtime/log.ts';

/** How long `listed` waits by default for the first list before it fails with the last error. */
const LIST_DEADLINE_MS = 30_000;

export type ScalableObject = KubeObject & { spec?: { replicas?: number } };

/**
 * Scale-ups of the objects of one type in one namespace as the API server publishes them (an object
 * whose spec.replicas grew), with the time each was seen: on deployments, where a reaction's change
 * reaches the controllers; on sets, where the deployment controller's hop ends.
 */
export class ScaleUps {
  private readonly replicas = new Map<string, number>();
  private readonly waiters = new Map<string, (at: number) => void>();
  private readonly appOf: (object: ScalableObject) => string | undefined;
  private markListed: () => void = () => undefined;
  private lastError: unknown = 'no answer yet';
  /**
   * Resolves once the objects are listed: a change sent after it is seen. Rejects, with the last
   * error, when no list succeeded within `listDeadlineMs`.
   */
  readonly listed: Promise<void>;

  /** `appOf` names the deployment an object belongs to (sets: their app label). */
  constructor(
    client: KubeClient,
    type: ResourceType<ScalableObject>,
    namespace: string,
    signal: AbortSignal,
    appOf: (object: ScalableObject) => string | undefined,
    listDeadlineMs = LIST_DEADLINE_MS,
  ) {
    this.appOf = appOf;
    this.listed = new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => {
        reject(
          new Error(
            `${type.plural} in ${namespace} not listed within ${listDeadlineMs} ms: ${errorMessage(this.lastError)}`,
          ),
        );
      }, listDeadlineMs);
      this.markListed = () => {
        clearTimeout(deadline);
        resolve();
      };
    });
    void this.follow(client, type, namespace, signal);
  }

  /** Resolves at the next scale-up of an object of deployment `app`, with the time it was seen. */
  next(app: string): Promise<number> {
    return new Promise((resolve) => this.waiters.set(app, resolve));
  }

  /** Stops waiting for `app` (its pod came first, or never). */
  forget(app: string): void {
    this.waiters.delete(app);
  }

  private seen(object: ScalableObject): void {
    const at = Date.now();
    const name = object.metadata?.name ?? '';
    const replicas = object.spec?.replicas ?? 0;
    const before = this.replicas.get(name);
    this.replicas.set(name, replicas);
    if (before === undefined || replicas <= before) return;
    const app = this.appOf(object);
    const waiter = app === undefined ? undefined : this.waiters.get(app);
    if (app !== undefined && waiter) {
      this.waiters.delete(app);
      waiter(at);
    }
  }

  private async follow(
    client: KubeClient,
    type: ResourceType<ScalableObject>,
    namespace: string,
    signal: AbortSignal,
  ): Promise<void> {
    let rv: string | undefined;
    const backoff = new JitteredBackoff(100, 5_000);
    while (!signal.aborted) {
      try {
        if (rv === undefined) {
          const list = await client.list(type, { namespace });
          for (const o of list.items) this.replicas.set(o.metadata?.name ?? '', o.spec?.replicas ?? 0);
          rv = list.metadata?.resourceVersion;
          this.markListed();
        }
        for await (const e of client.watch<ScalableObject>(type, {
          namespace,
          resourceVersion: rv,
          signal,
          timeoutSeconds: 600,
        })) {
          if (e.type === 'ADDED' || e.type === 'MODIFIED') this.seen(e.object);
          rv = e.object.metadata?.resourceVersion ?? rv;
          backoff.reset();
        }
      } catch (err) {
        if (signal.aborted) return;
        this.lastError = err;
        rv = undefined;
        await sleep(backoff.next(), signal);
      }
    }
  }
}
