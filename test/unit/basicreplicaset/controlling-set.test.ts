import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1OwnerReference } from '@kubernetes/client-node';
import { BASIC_REPLICA_SET } from '../../../src/apis/index.ts';
import { controllingSetKey } from '../../../src/controllers/basicreplicaset/logic/controlling-set.ts';

const sets: Record<string, string> = { 'ns/web': 'uid-new' };
const uidOfSet = (namespace: string, name: string) => sets[`${namespace}/${name}`];

const podOwnedBy = (ref: Partial<V1OwnerReference>) => ({
  metadata: {
    name: 'p',
    namespace: 'ns',
    ownerReferences: [
      {
        apiVersion: 'apps.basicoperator.dev/v1alpha1',
        kind: 'BasicReplicaSet',
        name: 'web',
        uid: 'uid-new',
        controller: true,
        ...ref,
      },
    ],
  },
});

describe('controllingSetKey (upstream resolveControllerRef)', () => {
  it('names the set that controls the pod', () => {
    assert.equal(controllingSetKey(podOwnedBy({}), BASIC_REPLICA_SET, uidOfSet), 'ns/web');
  });

  it('ignores a pod of a deleted set whose name a new set took', () => {
    assert.equal(controllingSetKey(podOwnedBy({ uid: 'uid-old' }), BASIC_REPLICA_SET, uidOfSet), undefined);
  });

  it('ignores other kinds, other groups, non-controller owners and unknown sets', () => {
    assert.equal(controllingSetKey(podOwnedBy({ kind: 'Machine' }), BASIC_REPLICA_SET, uidOfSet), undefined);
    assert.equal(
      controllingSetKey(podOwnedBy({ apiVersion: 'apps/v1' }), BASIC_REPLICA_SET, uidOfSet),
      undefined,
    );
    assert.equal(
      controllingSetKey(podOwnedBy({ controller: false }), BASIC_REPLICA_SET, uidOfSet),
      undefined,
    );
    assert.equal(controllingSetKey(podOwnedBy({ name: 'api' }), BASIC_REPLICA_SET, uidOfSet), undefined);
  });
});
