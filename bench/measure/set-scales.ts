import type { KubeClient } from '../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../src/runtime/client/object.ts';
import type { ResourceType } from '../../src/runtime/client/resource.ts';

type ScalableObject = KubeObject & { spec?: { replicas?: number } };

/**
 * Scale-ups of the replica sets in one namespace as the API server publishes them (a set whose
 * spec.replicas grew), with the time each was seen: where a reaction's first hop, the deployment
 * controller scaling its set, ends.
 */
export class SetScales {
  private readonly replicas = new Map<string, number>();
  private readonly waiters = new Map<string, (at: number) => void>();

  constructor(
    client: KubeClient,
    type: ResourceType<ScalableObject>,
    namespace: string,
    signal: AbortSignal,
  ) {
    void this.follow(client, type, namespace, signal);
  }

  /** Resolves at the next scale-up of a set labelled app=`app`, with the time it was seen. */
  next(app: string): Promise<number> {
    return new Promise((resolve) => this.waiters.set(app, resolve));
  }

  /** Stops waiting for `app` (its pod came first, or never). */
  forget(app: string): void {
    this.waiters.delete(app);
  }

  private seen(set: ScalableObject): void {
    const at = Date.now();
    const name = set.metadata?.name ?? '';
    const replicas = set.spec?.replicas ?? 0;
    const before = this.replicas.get(name);
    this.replicas.set(name, replicas);
    if (before === undefined || replicas <= before) return;
    const app = set.metadata?.labels?.app;
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
    while (!signal.aborted) {
      try {
        if (rv === undefined) {
          const list = await client.list(type, { namespace });
          for (const set of list.items) this.replicas.set(set.metadata?.name ?? '', set.spec?.replicas ?? 0);
          rv = list.metadata?.resourceVersion;
        }
        for await (const e of client.watch<ScalableObject>(type, {
          namespace,
          resourceVersion: rv,
          signal,
          timeoutSeconds: 600,
        })) {
          if (e.type === 'ADDED' || e.type === 'MODIFIED') this.seen(e.object);
          rv = e.object.metadata?.resourceVersion ?? rv;
        }
      } catch {
        if (signal.aborted) return;
        rv = undefined;
      }
    }
  }
}
