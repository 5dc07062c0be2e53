import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type WatchEvent, type WatchOptions } from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import type { ResourceType } from '../../../src/runtime/client/resource.ts';

/**
 * A client whose watch streams deliver every event `lagMs` late (in order), as a slow or congested
 * watch would. An informer built on it has a cache that really lags behind the server: lists are
 * current, but what happens after the list shows up only after the lag.
 */
export class LaggingClient extends KubeClient {
  readonly lagMs: number;

  constructor(kubeConfig: KubeConfig, lagMs: number) {
    super(kubeConfig, { userAgent: 'basic-operator-tests-lagging' });
    this.lagMs = lagMs;
  }

  override async *watch<T extends KubeObject>(
    type: ResourceType,
    options: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>> {
    const pending: Array<{ dueAt: number; event: WatchEvent<T> }> = [];
    let ended = false;
    let failure: unknown;
    let wake: (() => void) | undefined;
    const notify = () => {
      wake?.();
      wake = undefined;
    };
    // Read the real stream as fast as it comes, so the lag does not add up from event to event.
    const pump = (async () => {
      try {
        for await (const event of super.watch<T>(type, options)) {
          pending.push({ dueAt: Date.now() + this.lagMs, event });
          notify();
        }
      } catch (err) {
        failure = err;
      } finally {
        ended = true;
        notify();
      }
    })();
    for (;;) {
      const next = pending[0];
      if (next) {
        const waitMs = next.dueAt - Date.now();
        if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
        pending.shift();
        yield next.event;
        continue;
      }
      if (ended) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    await pump;
    if (failure !== undefined) throw failure;
  }
}
