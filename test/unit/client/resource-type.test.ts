import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { MACHINE, type Machine } from '../../../src/apis/index.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../../../src/runtime/client/resource.ts';

/** Stands for informerFor, client.get and the other calls that take a typed resource. */
function objectOf<T extends KubeObject>(_type: ResourceType<T>, obj: T): T {
  return obj;
}

describe('ResourceType carries the type of its objects', () => {
  it('accepts the object type of the resource and its supertypes, and nothing else (checked by tsc)', () => {
    const pod: V1Pod = { metadata: { name: 'p' } };
    assert.equal(objectOf<V1Pod>(CoreTypes.Pod, pod), pod);
    assert.equal(objectOf<KubeObject>(CoreTypes.Pod, pod), pod);
    const machine = { metadata: { name: 'm' }, spec: {} } as Machine;
    assert.equal(objectOf<Machine>(MACHINE, machine), machine);
    // @ts-expect-error a Pod resource does not yield Machines (npm run typecheck fails if this compiles)
    objectOf<Machine>(CoreTypes.Pod, machine);
  });
});
