import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import jsonPatch from 'fast-json-patch';
import { ADOPTABLE_BY_ANNOTATION, MACHINE } from '../../../src/apis/index.ts';
import { adoptionPatch, adoptionRefusal } from '../../../src/controllers/machine/logic/adoption.ts';
import type { Unstructured } from '../../../src/runtime/client/object.ts';
import { controllerReference } from '../../../src/runtime/write/owner-refs.ts';
import { adoptableBy, cloudMachine, machine } from './fixtures.ts';

const web = machine({}, 'web');

function withUid(obj: Unstructured): Unstructured {
  return { ...obj, metadata: { ...obj.metadata, uid: 'vm-uid', resourceVersion: '7' } };
}

describe('adoption of a provider object by a Machine', () => {
  it('is refused without a grant, and with a grant to another Machine, saying how to hand it over', () => {
    assert.equal(
      adoptionRefusal(cloudMachine('vm-1'), web),
      'CloudMachine vm-1 has no controller and does not say this Machine may adopt it; whoever made it annotates it infra.basicoperator.dev/adoptable-by=web to hand it over',
    );
    assert.match(
      adoptionRefusal(cloudMachine('vm-1', undefined, adoptableBy('db')), web) ?? '',
      /^CloudMachine vm-1 may be adopted by Machine db, not by this one; .*adoptable-by=web/,
    );
    assert.equal(adoptionRefusal(cloudMachine('vm-1', undefined, adoptableBy('web')), web), undefined);
  });

  it('the patch sets the controller and uses the grant up; it throws rather than adopt without one', () => {
    const obj = withUid(cloudMachine('vm-1', undefined, adoptableBy('web')));
    const patch = adoptionPatch(obj, web);
    assert.ok(patch);
    const adopted = jsonPatch.applyPatch(structuredClone(obj), patch, true).newDocument;
    assert.deepEqual(adopted.metadata?.ownerReferences, [controllerReference(web, MACHINE)]);
    assert.deepEqual(adopted.metadata?.annotations, {});
    assert.equal(adoptionPatch(adopted, web), undefined, 'already its controller');
    assert.throws(() => adoptionPatch(withUid(cloudMachine('vm-1')), web), /does not say this Machine/);
  });

  it('fails its test when the grant changed after the object was read', () => {
    const read = withUid(cloudMachine('vm-1', undefined, adoptableBy('web')));
    const patch = adoptionPatch(read, web) ?? [];
    const regranted = withUid(cloudMachine('vm-1', undefined, adoptableBy('db')));
    assert.throws(() => jsonPatch.applyPatch(structuredClone(regranted), patch, true));
    const withdrawn = withUid(cloudMachine('vm-1', undefined, { annotations: {} }));
    assert.throws(() => jsonPatch.applyPatch(structuredClone(withdrawn), patch, true));
    assert.equal(ADOPTABLE_BY_ANNOTATION, 'infra.basicoperator.dev/adoptable-by');
  });
});
