import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../../src/runtime/client/resource.ts';
import {
  controllerOf,
  isLive,
  isReady,
  ORPHAN_PREFIX,
  type SetObject,
  type Side,
  sideSelector,
} from './sides.ts';

/**
 * List, then watch, one collection for the whole run, calling `onEvent` after every event with the
 * current objects. A broken watch is restarted from a fresh list (its gap can only hide extremes,
 * never invent them).
 */
class Collection<T extends KubeObject> {
  readonly items = new Map<string, T>();
  private readonly abort = new AbortController();
  private readonly loop: Promise<void>;
  private synced!: () => void;
  readonly ready: Promise<void>;

  constructor(
    client: KubeClient,
    type: ResourceType<T>,
    namespace: string,
    labelSelector: string | undefined,
    onEvent: (type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'LIST', object: T | undefined) => void,
  ) {
    this.ready = new Promise((resolve) => {
      this.synced = resolve;
    });
    this.loop = (async () => {
      while (!this.abort.signal.aborted) {
        try {
          const list = await client.list<T>(type, { namespace, labelSelector, signal: this.abort.signal });
          this.items.clear();
          for (const item of list.items) this.items.set(item.metadata?.uid ?? '', item);
          onEvent('LIST', undefined);
          this.synced();
          for await (const event of client.watch<T>(type, {
            namespace,
            labelSelector,
            resourceVersion: list.metadata?.resourceVersion,
            allowWatchBookmarks: false,
            signal: this.abort.signal,
          })) {
            const uid = event.object.metadata?.uid ?? '';
            if (event.type === 'DELETED') this.items.delete(uid);
            else if (event.type === 'ADDED' || event.type === 'MODIFIED') this.items.set(uid, event.object);
            else break; // ERROR (e.g. 410 Gone): list again
            onEvent(event.type, event.object);
          }
        } catch {
          // restarted below unless stopping
        }
        if (this.abort.signal.aborted) return;
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }
}

/** What a side did during one step, sampled at every watch event. */
export interface StepSample {
  /** Most live (not terminating) pods owned by a set at once. */
  maxLive: number;
  /** Fewest live, Ready pods owned by a set at once. */
  minReady: number;
  /** Largest sum of the sets' spec.replicas at once (what maxSurge bounds in apps/v1). */
  maxSetReplicas: number;
  /** Pods created during the step (the harness's own orphans excluded). */
  created: number;
  /** Events at which pods of two templates existed at once (terminating ones included). */
  mixedTemplates: number;
  events: number;
}

/** Samples one side's pods and sets for the whole run; each step reads and resets its sample. */
export class SideSampler {
  private readonly side: Side;
  private readonly pods: Collection<V1Pod>;
  private readonly sets: Collection<SetObject>;
  private readonly seenPods = new Set<string>();
  private sample: StepSample = {
    maxLive: 0,
    minReady: 0,
    maxSetReplicas: 0,
    created: 0,
    mixedTemplates: 0,
    events: 0,
  };
  private ceiling = Number.POSITIVE_INFINITY;
  private onCeiling: ((created: number) => void) | undefined;

  constructor(client: KubeClient, side: Side, namespace: string) {
    this.side = side;
    this.pods = new Collection<V1Pod>(client, CoreTypes.Pod, namespace, sideSelector(side), (type, pod) => {
      const uid = pod?.metadata?.uid;
      if (type === 'LIST') for (const p of this.pods.items.keys()) this.seenPods.add(p);
      else if (uid && !this.seenPods.has(uid)) {
        this.seenPods.add(uid);
        if (!pod.metadata?.name?.startsWith(ORPHAN_PREFIX)) this.sample.created++;
      }
      this.observe();
    });
    this.sets = new Collection<SetObject>(client, side.setType, namespace, undefined, () => this.observe());
  }

  get ready(): Promise<unknown> {
    return Promise.all([this.pods.ready, this.sets.ready]);
  }

  private current(): { live: number; ready: number; setReplicas: number; templates: number } {
    const pods = [...this.pods.items.values()];
    // A hand-made orphan counts once a set adopted it (seed 167: a set that kept the adopted orphan
    // and deleted another pod looked one Ready pod short), but never toward the templates: one
    // without a pod-template-hash would look like a template of its own.
    const all = pods.filter((p) => !p.metadata?.name?.startsWith(ORPHAN_PREFIX));
    const live = pods.filter((p) => controllerOf(p)?.kind === this.side.setKind && isLive(p));
    const setReplicas = [...this.sets.items.values()]
      .filter((s) => s.metadata.ownerReferences?.some((r) => r.controller && r.name === this.side.name))
      .reduce((sum, s) => sum + (s.spec.replicas ?? 1), 0);
    const templates = new Set(all.map((p) => p.metadata?.labels?.[this.side.hashLabel] ?? '')).size;
    return { live: live.length, ready: live.filter(isReady).length, setReplicas, templates };
  }

  private observe(): void {
    const now = this.current();
    this.sample.events++;
    this.sample.maxLive = Math.max(this.sample.maxLive, now.live);
    this.sample.minReady = Math.min(this.sample.minReady, now.ready);
    this.sample.maxSetReplicas = Math.max(this.sample.maxSetReplicas, now.setReplicas);
    if (now.templates > 1) this.sample.mixedTemplates++;
    if (this.sample.created > this.ceiling) {
      const notify = this.onCeiling;
      this.onCeiling = undefined;
      notify?.(this.sample.created);
    }
  }

  /** Starts a new step's sample from the current state. */
  beginStep(ceiling: number, onCeiling: (created: number) => void): void {
    const now = this.current();
    this.sample = {
      maxLive: now.live,
      minReady: now.ready,
      maxSetReplicas: now.setReplicas,
      created: 0,
      mixedTemplates: 0,
      events: 0,
    };
    this.ceiling = ceiling;
    this.onCeiling = onCeiling;
  }

  endStep(): StepSample {
    this.onCeiling = undefined;
    this.ceiling = Number.POSITIVE_INFINITY;
    return { ...this.sample };
  }

  async stop(): Promise<void> {
    await Promise.all([this.pods.stop(), this.sets.stop()]);
  }
}
