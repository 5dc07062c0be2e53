// Following one object through a watch until a verdict or a deadline: the kit sees every change the
// provider makes (a stopped flag that flips back, the moment stopped is reported), not samples of it.
import { sleep } from '../../src/runtime/cache/backoff.ts';
import { isGone, isTransient } from '../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../src/runtime/client/object.ts';
import type { ResourceType } from '../../src/runtime/client/resource.ts';

export type Followed<V, T> = { verdict: V; elapsedMs: number } | { timedOut: true; last: T | undefined };

/** A watch that ended or failed in a way a fresh list mends. */
class Relist extends Error {}

/**
 * Lists the object, then watches it from that list's resourceVersion, calling `decide` with its
 * state (undefined once it is gone) each time it changes, until `decide` returns a verdict or
 * `timeoutMs` has passed: then it gives the last state seen. A watch that ends is resumed where it
 * left off; one the server has expired (410) or that failed on the network starts over from a list.
 */
export async function followObject<T extends KubeObject, V>(
  client: KubeClient,
  type: ResourceType<T>,
  namespace: string,
  name: string,
  decide: (obj: T | undefined) => V | undefined,
  timeoutMs: number,
): Promise<Followed<V, T>> {
  const started = Date.now();
  const signal = AbortSignal.timeout(timeoutMs);
  const fieldSelector = `metadata.name=${name}`;
  let last: T | undefined;
  const verdictOf = (obj: T | undefined) => {
    last = obj;
    const verdict = decide(obj);
    return verdict === undefined ? undefined : { verdict, elapsedMs: Date.now() - started };
  };
  while (!signal.aborted) {
    try {
      const list = await client.list(type, { namespace, fieldSelector, signal });
      const listed = verdictOf(list.items[0]);
      if (listed) return listed;
      let resourceVersion = list.metadata?.resourceVersion;
      for (;;) {
        const events = client.watch<T>(type, {
          namespace,
          fieldSelector,
          resourceVersion,
          signal,
          timeoutSeconds: Math.max(1, Math.ceil((timeoutMs - (Date.now() - started)) / 1000)),
        });
        for await (const event of events) {
          if (event.type === 'ERROR') throw new Relist();
          resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
          if (event.type === 'BOOKMARK') continue;
          const seen = verdictOf(event.type === 'DELETED' ? undefined : event.object);
          if (seen) return seen;
        }
        if (signal.aborted) break;
      }
    } catch (err) {
      if (signal.aborted) break;
      if (!(err instanceof Relist) && !isGone(err) && !isTransient(err)) throw err;
      await sleep(500, signal);
    }
  }
  return { timedOut: true, last };
}
