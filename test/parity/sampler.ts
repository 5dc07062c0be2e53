import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../src/runtime/client/resource.ts';
import { controllerOf, isLive, isReady, ORPHAN_PREFIX, type Side, sideSelector } from './sides.ts';

/** What a side's pods did during one step, sampled at every watch event. */
export interface StepSample {
  /** Most live (not terminating) pods owned by a set at once. */
  maxLive: number;
  /** Fewest live, Ready pods owned by a set at once. */
  minReady: number;
  /** Pods created during the step (the harness's own orphans excluded). */
  created: number;
  /** Events at which pods of two templates existed at once (terminating ones included). */
  mixedTemplates: number;
  events: number;
}

/**
 * Watches one side's pods for the whole run and folds every event into the current step's sample,
 * so bounds are checked on every state the API server published, not on polls. A broken watch is
 * restarted from a fresh list (its gap can only hide extremes, never invent them).
 */
export class PodSampler {
  private readonly pods = new Map<string, V1Pod>();
  private readonly seen = new Set<string>();
  private readonly abort = new AbortController();
  private readonly loop: Promise<void>;
  private sample: StepSample = { maxLive: 0, minReady: 0, created: 0, mixedTemplates: 0, events: 0 };
  private ceiling = Number.POSITIVE_INFINITY;
  private onCeiling: ((created: number) => void) | undefined;
  private synced!: () => void;
  readonly ready: Promise<void>;
  watchRestarts = 0;

  private readonly client: KubeClient;
  private readonly side: Side;
  private readonly namespace: string;

  constructor(client: KubeClient, side: Side, namespace: string) {
    this.client = client;
    this.side = side;
    this.namespace = namespace;
    this.ready = new Promise((resolve) => {
      this.synced = resolve;
    });
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        const list = await this.client.list<V1Pod>(CoreTypes.Pod, {
          namespace: this.namespace,
          labelSelector: sideSelector(this.side),
          signal: this.abort.signal,
        });
        this.pods.clear();
        for (const pod of list.items) {
          this.pods.set(pod.metadata?.uid ?? '', pod);
          this.seen.add(pod.metadata?.uid ?? '');
        }
        this.observe();
        this.synced();
        for await (const event of this.client.watch<V1Pod>(CoreTypes.Pod, {
          namespace: this.namespace,
          labelSelector: sideSelector(this.side),
          resourceVersion: list.metadata?.resourceVersion,
          allowWatchBookmarks: false,
          signal: this.abort.signal,
        })) {
          const uid = event.object.metadata?.uid ?? '';
          if (event.type === 'DELETED') this.pods.delete(uid);
          else if (event.type === 'ADDED' || event.type === 'MODIFIED') {
            this.pods.set(uid, event.object);
            if (!this.seen.has(uid)) {
              this.seen.add(uid);
              if (!event.object.metadata?.name?.startsWith(ORPHAN_PREFIX)) this.sample.created++;
            }
          } else break; // ERROR (e.g. 410 Gone): list again
          this.sample.events++;
          this.observe();
        }
      } catch {
        if (this.abort.signal.aborted) return;
      }
      if (this.abort.signal.aborted) return;
      this.watchRestarts++;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  private observe(): void {
    const all = [...this.pods.values()].filter((p) => !p.metadata?.name?.startsWith(ORPHAN_PREFIX));
    const owned = all.filter((p) => controllerOf(p)?.kind === this.side.setKind);
    const live = owned.filter(isLive);
    this.sample.maxLive = Math.max(this.sample.maxLive, live.length);
    this.sample.minReady = Math.min(this.sample.minReady, live.filter(isReady).length);
    const templates = new Set(all.map((p) => p.metadata?.labels?.[this.side.hashLabel] ?? ''));
    if (templates.size > 1) this.sample.mixedTemplates++;
    if (this.sample.created > this.ceiling) {
      const notify = this.onCeiling;
      this.onCeiling = undefined;
      notify?.(this.sample.created);
    }
  }

  /** Starts a new step's sample from the current state. */
  beginStep(ceiling: number, onCeiling: (created: number) => void): void {
    const owned = [...this.pods.values()].filter(
      (p) => !p.metadata?.name?.startsWith(ORPHAN_PREFIX) && controllerOf(p)?.kind === this.side.setKind,
    );
    const live = owned.filter(isLive);
    this.sample = {
      maxLive: live.length,
      minReady: live.filter(isReady).length,
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
    this.abort.abort();
    await this.loop;
  }
}
