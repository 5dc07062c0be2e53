import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../src/runtime/client/resource.ts';

const isReady = (pod: V1Pod) =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/**
 * Watches pods and re-evaluates `sample` after every single event, so invariants are checked on
 * every state the API server published, not on polls.
 */
export class PodWatcher {
  readonly pods = new Map<string, V1Pod>();
  private readonly abort = new AbortController();
  private readonly done: Promise<void>;
  events = 0;

  constructor(client: KubeClient, namespace: string, labelSelector: string, sample: (pods: V1Pod[]) => void) {
    this.done = (async () => {
      const list = await client.list<V1Pod>(CoreTypes.Pod, { namespace, labelSelector });
      for (const pod of list.items) this.pods.set(pod.metadata?.uid ?? '', pod);
      sample([...this.pods.values()]);
      try {
        for await (const event of client.watch<V1Pod>(CoreTypes.Pod, {
          namespace,
          labelSelector,
          resourceVersion: list.metadata?.resourceVersion,
          signal: this.abort.signal,
        })) {
          const uid = event.object.metadata?.uid ?? '';
          if (event.type === 'DELETED') this.pods.delete(uid);
          else if (event.type === 'ADDED' || event.type === 'MODIFIED') this.pods.set(uid, event.object);
          else continue;
          this.events++;
          sample([...this.pods.values()]);
        }
      } catch (err) {
        if (!this.abort.signal.aborted) throw err;
      }
    })();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}

export const podIsLive = (pod: V1Pod) => !pod.metadata?.deletionTimestamp;
export const podIsAvailable = (pod: V1Pod) => podIsLive(pod) && isReady(pod);
