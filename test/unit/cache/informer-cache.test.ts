import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { InformerCache } from '../../../src/runtime/cache/informer-cache.ts';
import { slimMetadata } from '../../../src/runtime/cache/reflector.ts';
import { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes, resourceId } from '../../../src/runtime/client/resource.ts';
import { rootLogger } from '../../../src/runtime/log.ts';

function cache(byObject?: Record<string, { labelSelector: string }>): InformerCache {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return new InformerCache(new KubeClient(kc), rootLogger('error'), { namespaces: ['ns'], byObject });
}

describe('InformerCache selections', () => {
  it('shares one informer per type and selection, and keeps different selections apart', () => {
    const c = cache();
    const all = c.informerFor(CoreTypes.Pod);
    assert.equal(c.informerFor(CoreTypes.Pod), all);
    const ours = c.informerFor(CoreTypes.Pod, { labelSelector: 'mine=true' });
    const others = c.informerFor(CoreTypes.Pod, { labelSelector: '!mine', metadataOnly: true });
    assert.notEqual(ours, all);
    assert.notEqual(others, ours);
    assert.equal(c.informerFor(CoreTypes.Pod, { labelSelector: 'mine=true' }), ours);
    assert.deepEqual(ours.scope, { namespaces: ['ns'], labelSelector: 'mine=true', metadataOnly: false });
    assert.deepEqual(others.scope, { namespaces: ['ns'], labelSelector: '!mine', metadataOnly: true });
    assert.deepEqual(Object.keys(c.sizes()).sort(), [
      'pods.v1.core',
      'pods.v1.core[!mine](metadata)',
      'pods.v1.core[mine=true]',
    ]);
  });

  it('applies the per-type default selector to informers asked for without one', () => {
    const c = cache({
      [resourceId(CoreTypes.Job)]: { labelSelector: 'app.kubernetes.io/managed-by=basic-operator' },
    });
    assert.equal(
      c.informerFor(CoreTypes.Job).scope.labelSelector,
      'app.kubernetes.io/managed-by=basic-operator',
    );
    assert.equal(
      c.informerFor(CoreTypes.Job, { labelSelector: '' }).scope.labelSelector,
      undefined,
      "'' is everything",
    );
    assert.equal(c.informerFor(CoreTypes.ConfigMap).scope.labelSelector, undefined);
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
