import type { V1Pod } from '@kubernetes/client-node';
import { JitteredBackoff, sleep } from '../../src/runtime/cache/backoff.ts';
import { isGone } from '../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../src/runtime/client/resource.ts';

/**
 * Pod creations in one namespace as the API server publishes them (ADDED events on a watch), with
 * the time each was seen: counted for throughput, and awaited one by one for reaction latency.
 */
export class PodCreates {
  /** Date.now() of every ADDED event, in order. */
  readonly times: number[] = [];
  /** Date.now() of the first event showing each pod bound to a node, and Ready (for --trace). */
  readonly bound: number[] = [];
  readonly ready: number[] = [];
  private readonly seenBound = new Set<string>();
  private readonly seenReady = new Set<string>();
  private readonly waiters = new Map<string, (at: number) => void>();

  constructor(client: KubeClient, namespace: string, signal: AbortSignal) {
    void this.follow(client, namespace, signal);
  }

  /** Resolves at the next pod created with label app=`app`, with the time it was seen. */
  next(app: string, timeoutMs: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(app);
        reject(new Error(`no pod of ${app} created within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(app, (at) => {
        clearTimeout(timer);
        resolve(at);
      });
    });
  }

  private progress(pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    if (uid === undefined) return;
    if (pod.spec?.nodeName && !this.seenBound.has(uid)) {
      this.seenBound.add(uid);
      this.bound.push(Date.now());
    }
    const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    if (ready && !this.seenReady.has(uid)) {
      this.seenReady.add(uid);
      this.ready.push(Date.now());
    }
  }

  private async follow(client: KubeClient, namespace: string, signal: AbortSignal): Promise<void> {
    // Where to start watching: only pods created from then on count, so one item is listed.
    let rv: string | undefined;
    const backoff = new JitteredBackoff(100, 5_000);
    while (!signal.aborted) {
      try {
        rv ??= (await client.list(CoreTypes.Pod, { namespace, limit: 1 })).metadata?.resourceVersion;
        for await (const e of client.watch<V1Pod>(CoreTypes.Pod, {
          namespace,
          resourceVersion: rv,
          signal,
          timeoutSeconds: 600,
        })) {
          if (e.type === 'ADDED') {
            const at = Date.now();
            this.times.push(at);
            const app = e.object.metadata?.labels?.app;
            const waiter = app === undefined ? undefined : this.waiters.get(app);
            if (app !== undefined && waiter) {
              this.waiters.delete(app);
              waiter(at);
            }
          }
          this.progress(e.object);
          rv = e.object.metadata?.resourceVersion ?? rv;
          backoff.reset();
        }
      } catch (err) {
        if (signal.aborted) return;
        // 410 Gone: that version is compacted away and will never be served again; start from now.
        if (isGone(err)) rv = undefined;
        // A watch that keeps failing (the API server restarting) is retried with a pause, not at once.
        await sleep(backoff.next(), signal);
      }
    }
  }
}

/** Pods created in each second after `started` (Date.now() times). */
export function perSecond(times: number[], started: number): number[] {
  const buckets: number[] = [];
  for (const t of times) {
    const i = Math.max(0, Math.floor((t - started) / 1000));
    while (buckets.length <= i) buckets.push(0);
    buckets[i]!++;
  }
  return buckets;
}

/** Creations per second from the first to the last. */
export function rate(times: number[]): number {
  if (times.length < 2) return 0;
  return (times.length - 1) / ((times[times.length - 1]! - times[0]!) / 1000);
}
