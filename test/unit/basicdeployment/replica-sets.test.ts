import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BASIC_DEPLOYMENT, type BasicDeployment, POD_TEMPLATE_HASH_LABEL } from '../../../src/apis/index.ts';
import { newSetFor } from '../../../src/controllers/basicdeployment/replica-sets.ts';

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
    const set = newSetFor(basicDeployment(), 'abc123', 3, 1);
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
      1,
    );
    assert.deepEqual(set.metadata.labels, { app: 'web', [POD_TEMPLATE_HASH_LABEL]: 'abc123' });
  });
});
