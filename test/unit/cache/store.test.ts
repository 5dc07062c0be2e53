import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Store } from '../../../src/runtime/cache/store.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';

/** An object with `depth` levels of nested objects under its spec, as the API server accepts (10,000). */
function nested(depth: number): KubeObject & { spec: Record<string, unknown> } {
  let inner: Record<string, unknown> = { leaf: [1, { end: true }] };
  for (let i = 0; i < depth; i++) inner = { a: inner };
  return {
    apiVersion: 'v1',
    kind: 'Thing',
    metadata: { name: 'deep', namespace: 'ns', uid: 'u' },
    spec: inner,
  };
}

describe('Store', () => {
  it('freezes what it keeps, however deep (10,000 levels: a recursive walk overflowed at about 5,000)', () => {
    const store = new Store<KubeObject>();
    const deep = nested(10_000);
    store.upsert(deep);
    let level: unknown = deep.spec;
    let levels = 0;
    while (level && typeof level === 'object' && 'a' in level) {
      assert.ok(Object.isFrozen(level));
      level = (level as { a: unknown }).a;
      levels++;
    }
    assert.equal(levels, 10_000);
    assert.ok(Object.isFrozen((level as { leaf: unknown[] }).leaf[1]));
    assert.throws(() => {
      (deep.spec as { b?: number }).b = 1;
    }, TypeError);
  });
});
