import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nestsDeeperThan } from '../../../src/apis/nesting.ts';

const nested = (depth: number): unknown => {
  let value: unknown = 'x';
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { a: value } : [value];
  return value;
};

describe('nestsDeeperThan', () => {
  it('counts objects and arrays as levels, scalars as none', () => {
    assert.equal(nestsDeeperThan('x', 0), false);
    assert.equal(nestsDeeperThan({}, 0), true);
    assert.equal(nestsDeeperThan({}, 1), false);
    assert.equal(nestsDeeperThan({ a: [] }, 1), true);
    assert.equal(nestsDeeperThan({ a: [], b: 'x' }, 2), false);
    assert.equal(nestsDeeperThan(nested(12), 12), false);
    assert.equal(nestsDeeperThan(nested(13), 12), true);
  });

  it('finds the deepest branch wherever it is', () => {
    assert.equal(nestsDeeperThan({ a: 1, b: [{}, { c: nested(4) }], d: {} }, 7), false);
    assert.equal(nestsDeeperThan({ a: 1, b: [{}, { c: nested(5) }], d: {} }, 7), true);
  });

  it('walks the 10,000 levels the apiserver allows without a stack overflow', () => {
    assert.equal(nestsDeeperThan(nested(10_000), 100), true);
    assert.equal(nestsDeeperThan(nested(10_000), 10_000), false);
  });
});
