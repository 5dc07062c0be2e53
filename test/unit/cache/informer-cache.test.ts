import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { waitFor } from '../../../e2e/support/wait.ts';
import { JitteredBackoff } from '../../../src/runtime/cache/backoff.ts';
import { InformerCache } from '../../../src/runtime/cache/informer-cache.ts';
import { slimMetadata } from '../../../src/runtime/cache/reflector.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
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

/** A kubeconfig for clients that never reach a server (their requests are answered in the test). */
function offlineKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

function cache(byObject?: Record<string, { labelSelector: string }>) {
  const client = new RecordingClient(offlineKubeConfig());
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

/**
 * Lists one pod (managedFields and all) whose resourceVersion counts the lists of that selection;
 * the first watch of each selection ends with a 410 ERROR, later ones wait.
 */
class OnePodClient extends KubeClient {
  readonly lists = new Map<string, number>();

  override async list<T extends KubeObject>(
    _type: ResourceType<T>,
    options: ListOptions = {},
  ): Promise<ObjectList<T>> {
    const scope = `${options.labelSelector}|${options.metadataOnly}`;
    const count = (this.lists.get(scope) ?? 0) + 1;
    this.lists.set(scope, count);
    const pod: V1Pod = {
      metadata: {
        name: 'p',
        namespace: 'ns',
        resourceVersion: String(count),
        managedFields: [{ manager: 'm' }],
      },
      spec: { containers: [{ name: 'app', image: 'app:1' }], nodeName: 'n1' },
    };
    return { items: [pod as T], metadata: { resourceVersion: String(count) } };
  }

  override async *watch<T extends KubeObject>(
    _type: ResourceType,
    options: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>> {
    if (options.resourceVersion === '1') {
      yield { type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old' } as unknown as T };
    }
    await new Promise((resolve) => options.signal?.addEventListener('abort', resolve, { once: true }));
  }
}

describe('InformerCache transforms', () => {
  it("applies the type's transform after managedFields are stripped, to full informers only; a 410 still relists", async () => {
    const client = new OnePodClient(offlineKubeConfig());
    const seen: KubeObject[] = [];
    const nodeOnly = (obj: KubeObject): KubeObject => {
      seen.push(structuredClone(obj));
      return { metadata: obj.metadata, spec: { nodeName: (obj as V1Pod).spec?.nodeName } } as V1Pod;
    };
    const cache = new InformerCache(client, rootLogger('error'), {
      byObject: { [resourceId(CoreTypes.Pod)]: { transform: nodeOnly } },
    });
    const pods = cache.informerFor(CoreTypes.Pod);
    const selected = cache.informerFor(CoreTypes.Pod, { labelSelector: 'app=web' });
    const metadata = cache.informerFor(CoreTypes.Pod, { metadataOnly: true });
    const stop = new AbortController();
    cache.start(stop.signal);
    const relisted = () => [...client.lists.values()].every((n) => n === 2);
    try {
      await cache.waitForSync();
      await waitFor('each 410 to be followed by a relist', relisted, { timeoutMs: 5000 });
    } finally {
      stop.abort();
      await cache.stopped();
    }

    for (const informer of [pods, selected]) {
      assert.deepEqual(informer.get('ns', 'p')?.spec, { nodeName: 'n1' });
      assert.equal(informer.get('ns', 'p')?.metadata?.resourceVersion, '2', 'relisted after the ERROR');
    }
    assert.equal(metadata.get('ns', 'p')?.spec?.containers?.length, 1, 'not transformed: only slimmed');
    assert.equal(seen.length, 4, 'the full informers each transformed one pod per list, nothing else');
    assert.ok(seen.every((obj) => obj.metadata?.managedFields === undefined));
  });
});

/** Refuses to list widgets (403) the first `refusals` times, then lists none; watches wait. */
class RefusingClient extends KubeClient {
  refusals: number;

  constructor(refusals: number) {
    super(offlineKubeConfig());
    this.refusals = refusals;
  }

  override async list<T extends KubeObject>(type: ResourceType<T>): Promise<ObjectList<T>> {
    if (type.plural === 'widgets' && this.refusals > 0) {
      this.refusals--;
      throw new ApiError(403, 'Forbidden', 'widgets.example.dev is forbidden: cannot list');
    }
    return { items: [], metadata: { resourceVersion: '1' } };
  }

  override async *watch<T extends KubeObject>(
    _type: ResourceType,
    options: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>> {
    await new Promise((resolve) => options.signal?.addEventListener('abort', resolve, { once: true }));
  }
}

const WIDGET = { group: 'example.dev', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };

describe('informers made at run time', () => {
  it('a first list that fails is reported (listAttempted, lastError) and cleared by the one that succeeds', async () => {
    const client = new RefusingClient(1);
    const backoff = new JitteredBackoff(1, 1, () => 0);
    const c = new InformerCache(client, rootLogger('error'), { reflector: { backoff } });
    const stop = new AbortController();
    c.start(stop.signal);
    const widgets = c.informerFor(WIDGET);
    await widgets.listAttempted();
    assert.equal(widgets.hasSynced, false);
    assert.ok(widgets.lastError instanceof ApiError && widgets.lastError.statusCode === 403);
    await widgets.waitForSync();
    assert.equal(widgets.lastError, undefined);
    stop.abort();
    await c.stopped();
  });

  it('hold neither waitForSync() nor unsynced(): a kind the operator may not list must not make it unready', async () => {
    const client = new RefusingClient(Number.POSITIVE_INFINITY);
    const c = new InformerCache(client, rootLogger('error'));
    c.informerFor(CoreTypes.Pod);
    const stop = new AbortController();
    c.start(stop.signal);
    await c.waitForSync();
    const widgets = c.informerFor(WIDGET);
    await widgets.listAttempted();
    assert.equal(widgets.hasSynced, false);
    assert.deepEqual(c.unsynced(), []);
    await c.waitForSync();
    stop.abort();
    await c.stopped();
  });
});
