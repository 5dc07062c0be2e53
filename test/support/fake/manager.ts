import { operatorManagerOptions } from '../../../src/controllers/index.ts';
import type { InformerCache } from '../../../src/runtime/cache/informer-cache.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import type { EventRecorder } from '../../../src/runtime/events/index.ts';
import { parseConfig } from '../../../src/runtime/manager/config.ts';
import { Manager } from '../../../src/runtime/manager/manager.ts';
import { MemoryEventRecorder } from '../memory-event-recorder.ts';
import type { FakeCluster } from './cluster.ts';

/** A cluster no request reaches: the manager's own clients are never used. */
const NO_CLUSTER = {
  getCurrentCluster: () => ({ server: 'https://127.0.0.1:1' }),
  applyToHTTPSOptions: async () => {},
};

function managerConfig() {
  const config = parseConfig(['--metrics-secure=false', '--log-level', 'error'], {});
  if (config === 'help') throw new Error('unexpected help');
  return config;
}

/**
 * The operator's Manager on a FakeCluster: its client and cache are the cluster's, its Events go to
 * `events`. A controller registers with it as with the operator's (a declaration's `register`),
 * through the real builder, and reconciles on the real controller loop against the fake API server.
 * It serves nothing and takes no lease: `runControllers()` starts the controllers once the caches
 * have caught up, as `start()` does without leader election.
 */
export class FakeClusterManager extends Manager {
  declare readonly client: KubeClient;
  declare readonly cache: InformerCache;
  declare readonly events: EventRecorder;
  readonly #cluster: FakeCluster;

  constructor(cluster: FakeCluster, events: MemoryEventRecorder = new MemoryEventRecorder()) {
    super(managerConfig(), NO_CLUSTER, operatorManagerOptions);
    this.#cluster = cluster;
    this.client = cluster.kubeClient;
    this.cache = cluster.cache;
    this.events = events;
  }

  async runControllers(): Promise<void> {
    await this.#cluster.sync();
    for (const controller of this.controllers) controller.start();
  }

  /** Stops the controllers, their in-flight reconciles and status writes finished. */
  async stopControllers(): Promise<void> {
    await Promise.all(this.controllers.map((controller) => controller.stop()));
  }
}
