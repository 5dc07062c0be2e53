import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type Kept,
  keepFields,
  mergeShapes,
  type Shape,
  StringPool,
} from '../../../src/runtime/cache/keep-fields.ts';

interface Thing {
  name?: string;
  tags?: Record<string, string>;
  spec?: { size?: number; secret?: string };
  items?: { id?: string; note?: string; nested?: { a?: string; b?: string } }[];
}

const SHAPE: Shape<Thing> = {
  name: true,
  tags: 'shared',
  spec: { size: true },
  items: { id: 'shared', nested: { a: true } },
};

describe('keepFields', () => {
  it('keeps the named fields (of each element of a list) and drops the rest, as new objects', () => {
    const thing: Thing = {
      name: 'x',
      tags: { app: 'web' },
      spec: { size: 3, secret: 's' },
      items: [{ id: '1', note: 'n', nested: { a: 'a', b: 'b' } }, { note: 'only a note' }],
    };
    const kept = keepFields(SHAPE)(thing);
    assert.deepEqual(kept, {
      name: 'x',
      tags: { app: 'web' },
      spec: { size: 3 },
      items: [{ id: '1', nested: { a: 'a' } }, {}],
    });
    assert.notEqual(kept.spec, thing.spec);
    assert.notEqual(kept.tags, thing.tags, 'a shared value is copied with strings from the pool');
    assert.deepEqual(thing.spec, { size: 3, secret: 's' }, 'the input is left as it was');
  });

  it('leaves out fields the object does not have, and those it keeps nothing of; keeps null as it is', () => {
    const kept = keepFields(SHAPE)({ name: null as unknown as string, spec: { secret: 's' }, items: [{}] });
    assert.deepEqual(kept, { name: null, items: [{}] }, 'a list keeps its length');
    assert.deepEqual(Object.keys(keepFields(SHAPE)({})), []);
  });

  it('never throws on odd input: values of another type than the shape expects are kept as they are', () => {
    const transform = keepFields(SHAPE);
    const odd: unknown[] = [
      {},
      { spec: null },
      { spec: 'text' },
      { spec: [1, 2] },
      { items: null },
      { items: 'text' },
      { items: [null, 1, 'x', { nested: null }] },
      { tags: { a: 1, b: null, c: ['x'], d: { e: 'f' } } },
    ];
    for (const input of odd) assert.doesNotThrow(() => transform(input as Thing), JSON.stringify(input));
    assert.deepEqual(transform({ items: [null, 1, { nested: null }] } as unknown as Thing), {
      items: [null, 1, { nested: null }],
    });
  });
});

describe('mergeShapes', () => {
  it('keeps every field one of the shapes keeps, nested shapes merged', () => {
    const merged = mergeShapes<Thing>(
      { name: true, spec: { size: true }, items: { id: 'shared', nested: { a: true } } },
      { spec: { secret: true }, items: { note: true, nested: { b: true } } },
      {},
    );
    assert.deepEqual(merged, {
      name: true,
      spec: { size: true, secret: true },
      items: { id: 'shared', nested: { a: true, b: true }, note: true },
    });
  });

  it('a field kept whole by one is kept whole; shared by one, it is shared', () => {
    assert.deepEqual(mergeShapes<Thing>({ spec: { size: true } }, { spec: true }), { spec: true });
    assert.deepEqual(mergeShapes<Thing>({ spec: 'shared' }, { spec: { size: true } }), { spec: 'shared' });
    assert.deepEqual(mergeShapes<Thing>({ tags: true }, { tags: 'shared' }), { tags: 'shared' });
    assert.deepEqual(mergeShapes<Thing>(), {});
  });

  it('leaves the shapes it merges as they were', () => {
    const a: Shape<Thing> = { spec: { size: true } };
    const b: Shape<Thing> = { spec: { secret: true } };
    mergeShapes(a, b);
    assert.deepEqual([a, b], [{ spec: { size: true } }, { spec: { secret: true } }]);
  });
});

describe('Kept', () => {
  const KEPT = { name: true, spec: { size: true }, tags: { app: 'shared' } } as const satisfies Shape<Thing>;
  type KeptThing = Kept<Thing, typeof KEPT>;
  const kept: KeptThing = keepFields<Thing>(KEPT)({
    name: 'x',
    spec: { size: 3, secret: 's' },
    tags: { app: 'web' },
  });

  it('types what a shape keeps: a field it drops does not compile (the @ts-expect-error lines)', () => {
    assert.deepEqual([kept.name, kept.spec?.size, kept.tags?.app], ['x', 3, 'web']);
    // @ts-expect-error the shape drops spec.secret
    assert.equal(kept.spec?.secret, undefined);
    // @ts-expect-error the shape drops items
    assert.equal(kept.items, undefined);
    // @ts-expect-error of a map (tags), only the keys the shape names
    assert.equal(kept.tags?.tier, undefined);
  });

  it('a whole object is a Kept one; a Kept one only where its shape keeps what is read', () => {
    const whole: Thing = { name: 'x', spec: { size: 1, secret: 's' } };
    const fromWhole: KeptThing = whole;
    const readsSize = (thing: Kept<Thing, { spec: { size: true } }>) => thing.spec?.size;
    const readsSecret = (thing: Kept<Thing, { spec: { secret: true } }>) => thing.spec?.secret;
    const readsSpec = (thing: Kept<Thing, { spec: true }>) => thing.spec;
    assert.equal(readsSize(kept), 3);
    assert.equal(readsSize(fromWhole), 1);
    // @ts-expect-error KEPT drops spec.secret, which readsSecret reads
    assert.equal(readsSecret(kept), undefined);
    // @ts-expect-error KEPT keeps only spec.size, readsSpec reads the whole spec
    assert.deepEqual(readsSpec(kept), { size: 3 });
    assert.equal(readsSecret(whole), 's');
  });
});

describe('StringPool', () => {
  it('holds each string once', () => {
    const pool = new StringPool();
    for (const s of ['a', 'b', 'a', `${'a'}`, 'b']) pool.intern(s);
    assert.equal(pool.size, 2);
  });

  it('starts over when full, so it cannot grow without bound', () => {
    const pool = new StringPool(3);
    for (const s of ['a', 'b', 'c']) pool.intern(s);
    assert.equal(pool.size, 3);
    assert.equal(pool.intern('d'), 'd');
    assert.equal(pool.size, 1);
  });

  it('a shared field interns its strings in the pool it was given', () => {
    const pool = new StringPool();
    const transform = keepFields<Thing>({ tags: 'shared', items: { id: 'shared' } }, pool);
    transform({ tags: { app: 'web', tier: 'web' }, items: [{ id: 'web' }, { id: '1' }], name: 'not shared' });
    assert.equal(pool.size, 2, '"web" and "1"');
  });
});
