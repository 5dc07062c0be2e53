import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keepFields, type Shape, StringPool } from '../../../src/runtime/cache/keep-fields.ts';

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
