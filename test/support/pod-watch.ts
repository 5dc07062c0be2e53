import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../../src/runtime/client/resource.ts';

const isReady = (pod: V1Pod) =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/**
 * Watches objects of one type and re-evaluates `sample` after every single event, so invariants are
 * checked on every state the API server published, not on polls.
 */
export class ObjectWatcher<T extends KubeObject> {
  readonly objects = new Map<string, T>();
  private readonly abort = new AbortController();
  private readonly done: Promise<void>;
  events = 0;

  constructor(
    client: KubeClient,
    type: ResourceType<T>,
    namespace: string,
    labelSelector: string,
    sample: (objects: T[]) => void,
  ) {
    this.done = (async () => {
      const list = await client.list<T>(type, { namespace, labelSelector });
      for (const pod of list.items) this.objects.set(pod.metadata?.uid ?? '', pod);
      sample([...this.objects.values()]);
      try {
        for await (const event of client.watch<T>(type, {
          namespace,
          labelSelector,
          resourceVersion: list.metadata?.resourceVersion,
          signal: this.abort.signal,
        })) {
          const uid = event.object.metadata?.uid ?? '';
          if (event.type === 'DELETED') this.objects.delete(uid);
          else if (event.type === 'ADDED' || event.type === 'MODIFIED') this.objects.set(uid, event.object);
          else continue;
          this.events++;
          sample([...this.objects.values()]);
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

/** Watches pods (see ObjectWatcher); `pods` holds them by uid. */
export class PodWatcher extends ObjectWatcher<V1Pod> {
  constructor(client: KubeClient, namespace: string, labelSelector: string, sample: (pods: V1Pod[]) => void) {
    super(client, CoreTypes.Pod, namespace, labelSelector, sample);
  }

  get pods(): Map<string, V1Pod> {
    return this.objects;
  }
}

export const podIsLive = (pod: V1Pod) => !pod.metadata?.deletionTimestamp;
export const podIsAvailable = (pod: V1Pod) => podIsLive(pod) && isReady(pod);
