import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OwnWrites } from '../../../src/runtime/cache/own-writes.ts';

const obj = (name: string, resourceVersion: string) => ({
  metadata: { namespace: 'ns', name, resourceVersion },
});

describe('OwnWrites', () => {
  it('a cached version a write replaced is behind; once the cache shows another, the write is forgotten', () => {
    const writes = new OwnWrites();
    writes.wrote(obj('a', '1'), obj('a', '2'));
    assert.equal(writes.isBehind(obj('a', '1')), true);
    assert.equal(writes.isBehind(obj('b', '1')), false, 'another object');
    assert.equal(writes.isBehind(obj('a', '2')), false, 'the cache shows the write');
    assert.equal(writes.isBehind(obj('a', '1')), false, 'forgotten once seen past');
  });

  it('two writes to one object: both replaced versions are behind', () => {
    const writes = new OwnWrites();
    writes.wrote(obj('a', '1'), obj('a', '2'));
    writes.wrote(obj('a', '2'), obj('a', '3'));
    assert.equal(writes.isBehind(obj('a', '1')), true);
    assert.equal(writes.isBehind(obj('a', '2')), true);
    assert.equal(writes.isBehind(obj('a', '5')), false);
  });

  it('a write that changed nothing (same version back) or an object without a version records nothing', () => {
    const writes = new OwnWrites();
    writes.wrote(obj('a', '1'), obj('a', '1'));
    writes.wrote({ metadata: { namespace: 'ns', name: 'b' } }, obj('b', '2'));
    assert.equal(writes.isBehind(obj('a', '1')), false);
    assert.equal(writes.isBehind({ metadata: { namespace: 'ns', name: 'b' } }), false);
  });

  it('writes to objects never seen again (deleted) are swept after a minute once many are held', () => {
    let now = 0;
    const writes = new OwnWrites(() => now);
    writes.wrote(obj('old', '1'), obj('old', '2'));
    now = 61_000;
    for (let i = 0; i < 1_000; i++) writes.wrote(obj(`n${i}`, '1'), obj(`n${i}`, '2'));
    assert.equal(writes.isBehind(obj('old', '1')), false, 'swept');
    assert.equal(writes.isBehind(obj('n5', '1')), true, 'recent writes kept');
  });
});
