import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BASIC_DEPLOYMENT,
  type BasicDeployment,
  POD_TEMPLATE_HASH_LABEL,
  REVISION_ANNOTATION,
} from '../../../src/apis/index.ts';
import {
  findNewSet,
  newSetFor,
  newSetUpdate,
} from '../../../src/controllers/basicdeployment/logic/replica-sets.ts';

function basicDeployment(spec: Partial<BasicDeployment['spec']> = {}): BasicDeployment {
  const labels = { app: 'web', 'app.kubernetes.io/managed-by': 'Helm' };
  return {
    apiVersion: BASIC_DEPLOYMENT.apiVersion,
    kind: BASIC_DEPLOYMENT.kind,
    metadata: { name: 'web', namespace: 'ns', uid: 'uid-1', generation: 1 },
    spec: {
      replicas: 3,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      },
      ...spec,
    },
  };
}

describe('newSetFor', () => {
  it("carries exactly the template's labels plus the pod-template-hash; a user's managed-by stays", () => {
    const set = newSetFor(basicDeployment(), 'abc123', 3, 1n);
    const expected = {
      app: 'web',
      'app.kubernetes.io/managed-by': 'Helm',
      [POD_TEMPLATE_HASH_LABEL]: 'abc123',
    };
    assert.deepEqual(set.metadata.labels, expected);
    assert.deepEqual(set.spec.template.metadata?.labels, expected);
    assert.deepEqual(set.spec.selector.matchLabels, expected);
  });
  it('adds no label to a template without labels of that domain', () => {
    const set = newSetFor(
      basicDeployment({
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
        },
      }),
      'abc123',
      3,
      1n,
    );
    assert.deepEqual(set.metadata.labels, { app: 'web', [POD_TEMPLATE_HASH_LABEL]: 'abc123' });
  });
});

describe('newSetUpdate', () => {
  const annotated = (spec: Partial<BasicDeployment['spec']> = {}) => {
    const d = basicDeployment(spec);
    d.metadata.annotations = {
      team: 'payments',
      'kubectl.kubernetes.io/last-applied-configuration': '{}',
      [REVISION_ANNOTATION]: '4',
    };
    return d;
  };
  it("copies the deployment's annotations (not ours, not kubectl's last-applied) to a new set", () => {
    const set = newSetFor(annotated(), 'abc123', 3, 5n);
    assert.equal(set.metadata.annotations?.team, 'payments');
    assert.equal(set.metadata.annotations?.[REVISION_ANNOTATION], '5');
    assert.equal(set.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'], undefined);
  });
  it('is undefined when the set is in line', () => {
    const d = annotated({ minReadySeconds: 5 });
    assert.equal(newSetUpdate(d, newSetFor(d, 'abc123', 3, 2n), 2n), undefined);
    assert.equal(newSetUpdate(d, newSetFor(d, 'abc123', 3, 2n), 1n), undefined, 'a revision never goes down');
  });
  it('syncs a changed minReadySeconds to the existing set (upstream getNewReplicaSet)', () => {
    const set = newSetFor(annotated({ minReadySeconds: 0 }), 'abc123', 3, 2n);
    assert.deepEqual(newSetUpdate(annotated({ minReadySeconds: 10 }), set, 2n), {
      annotations: {},
      minReadySeconds: 10,
    });
  });
  it('adds or overwrites copied annotations, raises the revision, and never removes an annotation', () => {
    const set = newSetFor(annotated(), 'abc123', 3, 2n);
    const d = annotated();
    d.metadata.annotations = { team: 'search', owner: 'alice' };
    assert.deepEqual(newSetUpdate(d, set, 7n), {
      annotations: { team: 'search', owner: 'alice', [REVISION_ANNOTATION]: '7' },
    });
  });
});

describe('findNewSet', () => {
  const d = basicDeployment();
  const set = (name: string, created: string, hash: string) => ({
    ...newSetFor(d, hash, 3, 1n),
    metadata: { ...newSetFor(d, hash, 3, 1n).metadata, name, creationTimestamp: new Date(created) },
  });

  it('takes the oldest set with the template, and of sets created in the same second the first by name', () => {
    const older = set('web-old', '2026-01-01T00:00:00Z', 'h1');
    assert.equal(
      findNewSet(d, [set('web-new', '2026-01-02T00:00:00Z', 'h2'), older])?.metadata.name,
      'web-old',
    );
    // upstream's ReplicaSetsByCreationTimestamp: equal times by name
    const tied = [set('web-b', '2026-01-01T00:00:00Z', 'h1'), set('web-a', '2026-01-01T00:00:00Z', 'h2')];
    assert.equal(findNewSet(d, tied)?.metadata.name, 'web-a');
  });
});
