import type { ResourceType } from '../../../src/runtime/client/resource.ts';
import type { Reconciler, Result } from '../../../src/runtime/controller/reconciler.ts';
import type { ObjectWithStatus } from '../../../src/runtime/write/status.ts';
import { MemoryEventRecorder } from '../memory-event-recorder.ts';
import { RecordingStatusWriter, reconcileContext } from '../reconcile-context.ts';
import type { FakeClient } from './client.ts';
import type { FakeCluster } from './cluster.ts';

/** A reconciler on a FakeCluster, and what it did: actions on the client, events, statuses. */
export interface Harness<T extends ObjectWithStatus> {
  cluster: FakeCluster;
  /** The cluster's recording client: the actions the reconciles took. */
  client: FakeClient;
  events: MemoryEventRecorder;
  /** One writer across reconciles, as the runtime keeps one per controller (latest() goes on from it). */
  status: RecordingStatusWriter<T>;
  reconcile(name: string, namespace?: string): Promise<Result | undefined>;
  /** `type reason` of each event, in order. */
  eventSummary(): string[];
}

/** What the controller under test reconciles, as its builder says: `.for(type)` and `.status({ strategy })`. */
export interface HarnessTarget<T extends ObjectWithStatus> {
  /** The reconciled type: `ctx.object` comes from its informer (the default selection). */
  for: ResourceType<T>;
  /** How the status last handed over is merged into `ctx.object` (default `replace`). */
  status?: 'replace' | 'apply';
}

/**
 * Builds a harness: `build` gets the cluster (seeded, its informers to be asked for) and the event
 * recorder, and returns the reconciler under test.
 */
export async function harness<T extends ObjectWithStatus>(
  cluster: FakeCluster,
  target: HarnessTarget<T>,
  build: (cluster: FakeCluster, events: MemoryEventRecorder) => Promise<Reconciler<T>>,
): Promise<Harness<T>> {
  const events = new MemoryEventRecorder();
  const status = new RecordingStatusWriter<T>(target.status);
  const reconciler = await build(cluster, events);
  const objects = await cluster.informer(target.for);
  return {
    cluster,
    client: cluster.client,
    events,
    status,
    reconcile: (name, namespace = 'ns') =>
      reconciler.reconcile(
        { namespace, name },
        reconcileContext<T>(undefined, status, objects.get(namespace, name)),
      ),
    eventSummary: () => events.events.map((e) => `${e.type} ${e.reason}`),
  };
}
