import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { InformerCache } from '../../../src/runtime/cache/informer-cache.ts';
import { slimMetadata } from '../../../src/runtime/cache/reflector.ts';
import {
  KubeClient,
  type ListOptions,
  type WatchEvent,
  type WatchOptions,
} from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject, ObjectList } from '../../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType, resourceId } from '../../../src/runtime/client/resource.ts';
import { rootLogger } from '../../../src/runtime/log.ts';

/** Records what each informer lists (always nothing); its watches wait for the end. */
class RecordingClient extends KubeClient {
  readonly lists: string[] = [];

  override async list<T extends KubeObject>(
    type: ResourceType<T>,
    options: ListOptions = {},
  ): Promise<ObjectList<T>> {
    const selector = options.labelSelector === undefined ? '' : ` [${options.labelSelector}]`;
    this.lists.push(
      `${type.plural} in ${options.namespace}${selector}${options.metadataOnly ? ' metadata' : ''}`,
    );
    return { items: [], metadata: { resourceVersion: '1' } };
  }

  override async *watch<T extends KubeObject>(
    _type: ResourceType,
    options: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>> {
    await new Promise((resolve) => options.signal?.addEventListener('abort', resolve, { once: true }));
  }
}

function cache(byObject?: Record<string, { labelSelector: string }>) {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const client = new RecordingClient(kc);
  const informers = new InformerCache(client, rootLogger('error'), { namespaces: ['ns'], byObject });
  /** Starts the cache, waits for every informer's first list and stops it: what was listed. */
  const listed = async (): Promise<string[]> => {
    const stop = new AbortController();
    informers.start(stop.signal);
    await informers.waitForSync();
    stop.abort();
    await informers.stopped();
    return client.lists.sort();
  };
  return { informers, listed };
}

describe('InformerCache selections', () => {
  it('shares one informer per type and selection, and keeps different selections apart', async () => {
    const { informers: c, listed } = cache();
    const all = c.informerFor(CoreTypes.Pod);
    assert.equal(c.informerFor(CoreTypes.Pod), all);
    const ours = c.informerFor(CoreTypes.Pod, { labelSelector: 'mine=true' });
    const others = c.informerFor(CoreTypes.Pod, { labelSelector: '!mine', metadataOnly: true });
    assert.notEqual(ours, all);
    assert.notEqual(others, ours);
    assert.equal(c.informerFor(CoreTypes.Pod, { labelSelector: 'mine=true' }), ours);
    assert.deepEqual(c.unsynced().sort(), [
      'pods.v1.core',
      'pods.v1.core[!mine](metadata)',
      'pods.v1.core[mine=true]',
    ]);
    assert.deepEqual(await listed(), ['pods in ns', 'pods in ns [!mine] metadata', 'pods in ns [mine=true]']);
  });

  it('applies the per-type default selector to informers asked for without one', async () => {
    const { informers: c, listed } = cache({
      [resourceId(CoreTypes.Job)]: { labelSelector: 'app.kubernetes.io/managed-by=basic-operator' },
    });
    const managed = c.informerFor(CoreTypes.Job);
    assert.notEqual(c.informerFor(CoreTypes.Job, { labelSelector: '' }), managed, "'' is everything");
    c.informerFor(CoreTypes.ConfigMap);
    assert.deepEqual(await listed(), [
      'configmaps in ns',
      'jobs in ns',
      'jobs in ns [app.kubernetes.io/managed-by=basic-operator]',
    ]);
  });
});

describe('slimMetadata', () => {
  it('keeps what claiming needs and drops annotations, managed fields and finalizers', () => {
    const obj = slimMetadata({
      apiVersion: 'meta.k8s.io/v1',
      kind: 'PartialObjectMetadata',
      metadata: {
        name: 'p',
        namespace: 'ns',
        uid: 'u',
        resourceVersion: '5',
        generateName: 'p-',
        labels: { app: 'web' },
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': 'x'.repeat(10_000) },
        managedFields: [{ manager: 'kubectl' }],
        finalizers: ['f'],
        ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'x' }],
      },
    });
    assert.deepEqual(Object.keys(obj.metadata ?? {}).sort(), [
      'labels',
      'name',
      'namespace',
      'ownerReferences',
      'resourceVersion',
      'uid',
    ]);
  });
});
