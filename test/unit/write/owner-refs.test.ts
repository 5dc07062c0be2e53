import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1OwnerReference } from '@kubernetes/client-node';
import jsonPatch from 'fast-json-patch';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import type { ResourceType } from '../../../src/runtime/client/resource.ts';
import type { JsonPatch } from '../../../src/runtime/write/guarded-patch.ts';
import {
  adoptPatch,
  controllerReference,
  isControlledBy,
  releasePatch,
} from '../../../src/runtime/write/owner-refs.ts';

const ReplicaSetType: ResourceType = {
  group: 'apps.basicoperator.dev',
  version: 'v1alpha1',
  kind: 'BasicReplicaSet',
  plural: 'basicreplicasets',
  namespaced: true,
};

const owner: KubeObject = { metadata: { name: 'web-abc', namespace: 'ns', uid: 'rs-uid' } };
const ownerRef: V1OwnerReference = {
  apiVersion: 'apps.basicoperator.dev/v1alpha1',
  kind: 'BasicReplicaSet',
  name: 'web-abc',
  uid: 'rs-uid',
  controller: true,
  blockOwnerDeletion: true,
};
const otherRef: V1OwnerReference = { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', uid: 'cm-uid' };

function pod(ownerReferences?: V1OwnerReference[]): KubeObject {
  return {
    metadata: {
      name: 'web-abc-x',
      namespace: 'ns',
      uid: 'pod-uid',
      resourceVersion: '7',
      ...(ownerReferences && { ownerReferences }),
    },
  };
}

function apply(obj: KubeObject, patch: JsonPatch): KubeObject {
  return jsonPatch.applyPatch(structuredClone(obj), patch, true, false).newDocument;
}

describe('controllerReference', () => {
  it('builds a controller reference that blocks owner deletion', () => {
    assert.deepEqual(controllerReference(owner, ReplicaSetType), ownerRef);
  });

  it('uses the core group version as apiVersion', () => {
    const podType: ResourceType = { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };
    assert.equal(controllerReference(owner, podType).apiVersion, 'v1');
  });

  it('refuses an owner without name or uid', () => {
    assert.throws(() => controllerReference({ metadata: { name: 'x' } }, ReplicaSetType), TypeError);
    assert.throws(() => controllerReference({ metadata: { uid: 'u' } }, ReplicaSetType), TypeError);
  });
});

describe('isControlledBy', () => {
  it('matches the controller reference by uid', () => {
    assert.equal(isControlledBy(pod([otherRef, ownerRef]), owner), true);
    assert.equal(isControlledBy(pod([{ ...ownerRef, controller: false }]), owner), false);
    assert.equal(isControlledBy(pod([{ ...ownerRef, uid: 'someone-else' }]), owner), false);
    assert.equal(isControlledBy(pod(), owner), false);
    assert.equal(isControlledBy(pod([ownerRef]), { metadata: { name: 'web-abc' } }), false);
  });
});

describe('adoptPatch', () => {
  it('adds the list to an object without references, guarded by uid and resourceVersion', () => {
    const orphan = pod();
    const patch = adoptPatch(orphan, owner, ReplicaSetType)!;
    assert.deepEqual(patch, [
      { op: 'test', path: '/metadata/uid', value: 'pod-uid' },
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      { op: 'add', path: '/metadata/ownerReferences', value: [ownerRef] },
    ]);
    assert.deepEqual(apply(orphan, patch).metadata?.ownerReferences, [ownerRef]);
  });

  it('appends to existing references, guarded by the whole list', () => {
    const orphan = pod([otherRef]);
    const patch = adoptPatch(orphan, owner, ReplicaSetType)!;
    assert.deepEqual(patch, [
      { op: 'test', path: '/metadata/uid', value: 'pod-uid' },
      { op: 'test', path: '/metadata/ownerReferences', value: [otherRef] },
      { op: 'add', path: '/metadata/ownerReferences/-', value: ownerRef },
    ]);
    assert.deepEqual(apply(orphan, patch).metadata?.ownerReferences, [otherRef, ownerRef]);
  });

  it('fails if someone else adopted the object first', () => {
    const patch = adoptPatch(pod([otherRef]), owner, ReplicaSetType)!;
    const adoptedMeanwhile = pod([otherRef, { ...ownerRef, name: 'rival', uid: 'rival-uid' }]);
    assert.throws(() => apply(adoptedMeanwhile, patch), { name: 'TEST_OPERATION_FAILED' });
  });

  it('upgrades an existing non-controller reference to the owner in place', () => {
    const orphan = pod([{ ...ownerRef, controller: false, blockOwnerDeletion: false }, otherRef]);
    const patch = adoptPatch(orphan, owner, ReplicaSetType)!;
    assert.deepEqual(patch.at(-1), { op: 'replace', path: '/metadata/ownerReferences/0', value: ownerRef });
    assert.deepEqual(apply(orphan, patch).metadata?.ownerReferences, [ownerRef, otherRef]);
  });

  it('returns undefined when already ours, and throws when controlled by another', () => {
    assert.equal(adoptPatch(pod([ownerRef]), owner, ReplicaSetType), undefined);
    assert.throws(
      () => adoptPatch(pod([{ ...ownerRef, uid: 'rival' }]), owner, ReplicaSetType),
      /already controlled/,
    );
  });
});

describe('releasePatch', () => {
  it('removes our reference, guarded by uid tests on the object and the entry', () => {
    const controlled = pod([otherRef, ownerRef]);
    const patch = releasePatch(controlled, owner)!;
    assert.deepEqual(patch, [
      { op: 'test', path: '/metadata/uid', value: 'pod-uid' },
      { op: 'test', path: '/metadata/ownerReferences/1/uid', value: 'rs-uid' },
      { op: 'remove', path: '/metadata/ownerReferences/1' },
    ]);
    assert.deepEqual(apply(controlled, patch).metadata?.ownerReferences, [otherRef]);
  });

  it('fails if the list shifted under it', () => {
    const patch = releasePatch(pod([otherRef, ownerRef]), owner)!;
    assert.throws(() => apply(pod([ownerRef, otherRef]), patch), { name: 'TEST_OPERATION_FAILED' });
    assert.throws(() => apply(pod([ownerRef]), patch), { name: 'OPERATION_PATH_UNRESOLVABLE' });
  });

  it('returns undefined when there is no reference to the owner', () => {
    assert.equal(releasePatch(pod([otherRef]), owner), undefined);
    assert.equal(releasePatch(pod(), owner), undefined);
  });
});
