import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import {
  controllerChanged,
  deletionChanged,
  ownerReferencesChanged,
} from '../../../src/runtime/controller/predicates.ts';

const ref = (uid: string, controller = true) => ({ apiVersion: 'v1', kind: 'X', name: uid, uid, controller });
const obj = (metadata: KubeObject['metadata']): KubeObject => ({ metadata });

describe('metadata predicates', () => {
  it('controllerChanged: another controller, or none, but not another non-controller reference', () => {
    const a = obj({ ownerReferences: [ref('a')] });
    assert.equal(controllerChanged.update?.(a, obj({ ownerReferences: [ref('b')] })), true);
    assert.equal(controllerChanged.update?.(a, obj({})), true);
    assert.equal(controllerChanged.update?.(a, obj({ ownerReferences: [ref('a'), ref('x', false)] })), false);
  });

  it('ownerReferencesChanged: any reference added, removed or changed', () => {
    const a = obj({ ownerReferences: [ref('a')] });
    assert.equal(
      ownerReferencesChanged.update?.(a, obj({ ownerReferences: [ref('a'), ref('x', false)] })),
      true,
    );
    assert.equal(ownerReferencesChanged.update?.(a, obj({ ownerReferences: [ref('a')] })), false);
  });

  it('deletionChanged: only the start (or end) of a deletion', () => {
    const live = obj({});
    const deleting = obj({ deletionTimestamp: new Date(0) });
    assert.equal(deletionChanged.update?.(live, deleting), true);
    assert.equal(deletionChanged.update?.(deleting, obj({ deletionTimestamp: new Date(1) })), false);
    assert.equal(deletionChanged.update?.(live, obj({ labels: { a: 'b' } })), false);
  });
});
