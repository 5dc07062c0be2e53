import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import jsonPatch from 'fast-json-patch';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import {
  addFinalizerPatch,
  hasFinalizer,
  removeFinalizerPatch,
} from '../../../src/runtime/write/finalizers.ts';
import type { JsonPatch } from '../../../src/runtime/write/guarded-patch.ts';

const BACKUP = 'infra.basicoperator.dev/volume-backup';
const OTHER = 'example.com/other';

function machine(finalizers?: string[]): KubeObject {
  return {
    apiVersion: 'infra.basicoperator.dev/v1alpha1',
    kind: 'Machine',
    metadata: {
      name: 'm1',
      namespace: 'ns',
      uid: 'uid-1',
      resourceVersion: '41',
      ...(finalizers && { finalizers }),
    },
  };
}

/** Applies a patch the way the API server does: atomically, with `test` operations enforced. */
function apply(obj: KubeObject, patch: JsonPatch): KubeObject {
  return jsonPatch.applyPatch(structuredClone(obj), patch, true, false).newDocument;
}

function assertTestFails(obj: KubeObject, patch: JsonPatch): void {
  assert.throws(() => apply(obj, patch), { name: 'TEST_OPERATION_FAILED' });
}

describe('hasFinalizer', () => {
  it('looks for the exact name', () => {
    assert.equal(hasFinalizer(machine([OTHER, BACKUP]), BACKUP), true);
    assert.equal(hasFinalizer(machine([OTHER]), BACKUP), false);
    assert.equal(hasFinalizer(machine(), BACKUP), false);
    assert.equal(hasFinalizer({}, BACKUP), false);
  });
});

describe('addFinalizerPatch', () => {
  it('appends to an existing list, guarded by uid and the whole current list', () => {
    const obj = machine([OTHER]);
    const patch = addFinalizerPatch(obj, BACKUP)!;
    assert.deepEqual(patch, [
      { op: 'test', path: '/metadata/uid', value: 'uid-1' },
      { op: 'test', path: '/metadata/finalizers', value: [OTHER] },
      { op: 'add', path: '/metadata/finalizers/-', value: BACKUP },
    ]);
    assert.deepEqual(apply(obj, patch).metadata?.finalizers, [OTHER, BACKUP]);
  });

  it('fails instead of overwriting when another writer changed the list meanwhile', () => {
    const patch = addFinalizerPatch(machine([OTHER]), BACKUP)!;
    assertTestFails(machine([OTHER, 'third.example.com/x']), patch);
    assertTestFails(machine([]), patch);
  });

  it('adds a missing list, guarded by uid and resourceVersion (JSON Patch cannot test for absence)', () => {
    const obj = machine();
    const patch = addFinalizerPatch(obj, BACKUP)!;
    assert.deepEqual(patch, [
      { op: 'test', path: '/metadata/uid', value: 'uid-1' },
      { op: 'test', path: '/metadata/resourceVersion', value: '41' },
      { op: 'add', path: '/metadata/finalizers', value: [BACKUP] },
    ]);
    assert.deepEqual(apply(obj, patch).metadata?.finalizers, [BACKUP]);
    const listAddedMeanwhile = machine([OTHER]);
    listAddedMeanwhile.metadata!.resourceVersion = '42';
    assertTestFails(listAddedMeanwhile, patch);
  });

  it('never applies to a namesake created after a delete', () => {
    const patch = addFinalizerPatch(machine([OTHER]), BACKUP)!;
    const namesake = machine([OTHER]);
    namesake.metadata!.uid = 'uid-2';
    assertTestFails(namesake, patch);
  });

  it('returns undefined when the finalizer is already there', () => {
    assert.equal(addFinalizerPatch(machine([BACKUP]), BACKUP), undefined);
  });

  it('leaves out guards it has no data for', () => {
    assert.deepEqual(addFinalizerPatch({ metadata: { name: 'bare' } }, BACKUP), [
      { op: 'add', path: '/metadata/finalizers', value: [BACKUP] },
    ]);
  });
});

describe('removeFinalizerPatch', () => {
  it('removes index i guarded by a test that index i holds the finalizer', () => {
    const obj = machine([OTHER, BACKUP]);
    const patch = removeFinalizerPatch(obj, BACKUP)!;
    assert.deepEqual(patch, [
      { op: 'test', path: '/metadata/uid', value: 'uid-1' },
      { op: 'test', path: '/metadata/finalizers/1', value: BACKUP },
      { op: 'remove', path: '/metadata/finalizers/1' },
    ]);
    assert.deepEqual(apply(obj, patch).metadata?.finalizers, [OTHER]);
  });

  it('tolerates other writers appending, but fails if our entry moved', () => {
    const patch = removeFinalizerPatch(machine([OTHER, BACKUP]), BACKUP)!;
    assert.deepEqual(apply(machine([OTHER, BACKUP, 'late.example.com/x']), patch).metadata?.finalizers, [
      OTHER,
      'late.example.com/x',
    ]);
    assertTestFails(machine([BACKUP]), patch);
  });

  it('removes duplicates from the last index to the first', () => {
    const obj = machine([BACKUP, OTHER, BACKUP]);
    const patch = removeFinalizerPatch(obj, BACKUP)!;
    assert.deepEqual(patch, [
      { op: 'test', path: '/metadata/uid', value: 'uid-1' },
      { op: 'test', path: '/metadata/finalizers/2', value: BACKUP },
      { op: 'remove', path: '/metadata/finalizers/2' },
      { op: 'test', path: '/metadata/finalizers/0', value: BACKUP },
      { op: 'remove', path: '/metadata/finalizers/0' },
    ]);
    assert.deepEqual(apply(obj, patch).metadata?.finalizers, [OTHER]);
  });

  it('returns undefined when the finalizer is not there', () => {
    assert.equal(removeFinalizerPatch(machine([OTHER]), BACKUP), undefined);
    assert.equal(removeFinalizerPatch(machine(), BACKUP), undefined);
  });
});
