// The JSON Patch that hands a child over from the PodMachine's controller owner to the PodMachine.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1OwnerReference, V1Pod } from '@kubernetes/client-node';
import jsonPatch from 'fast-json-patch';
import { CREATED_FOR_ANNOTATION } from '../../../src/apis/index.ts';
import { isInherited, reparentPatch } from '../../../src/controllers/podmachine/reparent.ts';
import { OWNER, podMachine } from './fixtures.ts';

const OTHER: V1OwnerReference = {
  apiVersion: 'example.com/v1',
  kind: 'Thing',
  name: 'x',
  uid: 'u-x',
};

function child(ownerReferences: V1OwnerReference[] | undefined, labels?: Record<string, string>): V1Pod {
  return {
    metadata: {
      name: 'web',
      namespace: 'ns',
      uid: 'u-pod',
      resourceVersion: '7',
      ...(labels ? { labels } : {}),
      ...(ownerReferences ? { ownerReferences } : {}),
    },
  };
}

const MACHINE_LABELS = {
  'app.kubernetes.io/managed-by': 'basic-operator',
  'infra.basicoperator.dev/machine': 'web',
};

describe('reparentPatch', () => {
  const pm = podMachine({}, { owner: OWNER });
  const mine: V1OwnerReference = {
    apiVersion: 'infra.basicoperator.dev/v1alpha1',
    kind: 'PodMachine',
    name: 'web',
    uid: pm.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };

  it("replaces the owner's controller reference by the PodMachine's, keeps the others, adds its label", () => {
    const obj = child([OTHER, OWNER], MACHINE_LABELS);
    const patch = reparentPatch(obj, pm);
    assert.deepEqual(patch, [
      { op: 'test', path: '/metadata/uid', value: 'u-pod' },
      { op: 'test', path: '/metadata/ownerReferences', value: [OTHER, OWNER] },
      { op: 'replace', path: '/metadata/ownerReferences/1', value: mine },
      { op: 'add', path: '/metadata/labels/infra.basicoperator.dev~1podmachine', value: 'web' },
    ]);
    const patched = jsonPatch.applyPatch(structuredClone(obj), patch!, true).newDocument;
    assert.deepEqual(patched.metadata?.ownerReferences, [OTHER, mine]);
    assert.deepEqual(patched.metadata?.labels, {
      ...MACHINE_LABELS,
      'infra.basicoperator.dev/podmachine': 'web',
    });
  });

  it('fails to apply when the owner references changed since the read', () => {
    const patch = reparentPatch(child([OWNER], MACHINE_LABELS), pm)!;
    const changed = child([OWNER, OTHER], MACHINE_LABELS);
    assert.throws(() => jsonPatch.applyPatch(changed, patch, true));
  });

  it('adds a labels map guarded by the resourceVersion when the object has none', () => {
    const patch = reparentPatch(child([OWNER]), pm);
    assert.deepEqual(patch?.slice(0, 2), [
      { op: 'test', path: '/metadata/uid', value: 'u-pod' },
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
    ]);
    assert.deepEqual(patch?.at(-1), {
      op: 'add',
      path: '/metadata/labels',
      value: { 'infra.basicoperator.dev/podmachine': 'web' },
    });
  });

  it('leaves alone what its owner does not control: its own, foreign, orphans; and without an owner, all', () => {
    const own = child([mine]);
    const foreign = child([{ ...OWNER, uid: 'another-machine' }]);
    const notController = child([{ ...OWNER, controller: false }]);
    for (const obj of [own, foreign, notController, child(undefined)]) {
      assert.equal(isInherited(obj, pm), false);
      assert.equal(reparentPatch(obj, pm), undefined);
    }
    assert.equal(reparentPatch(child([OWNER]), podMachine()), undefined, 'a PodMachine without an owner');
  });

  it('takes nothing over for a PodMachine its owner did not create (adopted through a grant, or one that says another Machine made it)', () => {
    const adopted = podMachine({}, { owner: OWNER, annotations: { [CREATED_FOR_ANNOTATION]: '' } });
    const madeForAnother = podMachine(
      {},
      { owner: OWNER, annotations: { [CREATED_FOR_ANNOTATION]: 'another' } },
    );
    for (const pm of [adopted, madeForAnother]) {
      assert.equal(isInherited(child([OWNER]), pm), false);
      assert.equal(reparentPatch(child([OWNER]), pm), undefined);
    }
  });
});
