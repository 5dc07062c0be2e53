import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REPLICA_SET_POD_LABEL } from '../../../src/apis/index.ts';
import { podForReplicaSet } from '../../../src/controllers/basicreplicaset/logic/pod-template.ts';
import { replicaSet } from './sets.ts';

describe('podForReplicaSet', () => {
  it("carries the template's labels exactly, plus only our marker label", () => {
    const rs = replicaSet('web', {
      app: 'web',
      'app.kubernetes.io/managed-by': 'Helm',
      'apps.basicoperator.dev/pod-template-hash': '5d8f7c',
    });
    const pod = podForReplicaSet(rs);
    assert.deepEqual(pod.metadata?.labels, {
      app: 'web',
      'app.kubernetes.io/managed-by': 'Helm',
      'apps.basicoperator.dev/pod-template-hash': '5d8f7c',
      [REPLICA_SET_POD_LABEL]: 'true',
    });
  });

  it('is controlled by the set and named after it', () => {
    const pod = podForReplicaSet(replicaSet('web', { app: 'web' }));
    assert.equal(pod.metadata?.generateName, 'web-');
    assert.equal(pod.metadata?.namespace, 'ns');
    assert.deepEqual(
      pod.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]),
      [['BasicReplicaSet', 'web', 'uid-web', true]],
    );
  });

  it('does not share the template with the set it was built from', () => {
    const rs = replicaSet('web', { app: 'web' });
    const pod = podForReplicaSet(rs);
    pod.metadata!.labels!.extra = 'x';
    pod.spec!.containers[0]!.image = 'other';
    assert.deepEqual(rs.spec.template.metadata?.labels, { app: 'web' });
    assert.equal(rs.spec.template.spec.containers[0]?.image, 'pause');
  });
});
