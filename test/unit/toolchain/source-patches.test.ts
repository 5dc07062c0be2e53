import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applySourcePatch, type SourcePatch } from '../../../e2e/providers/local/toolchain/source-patches.ts';

const patch: SourcePatch = { file: 'a.go', why: 'test', find: 'x = 0', replace: 'x = 1' };

describe('source patches', () => {
  it('replace the one place their text occurs', () => {
    assert.equal(applySourcePatch('a\nx = 0\nb\n', patch), 'a\nx = 1\nb\n');
  });

  it('refuse source where their text is missing, as in a new upstream version', () => {
    assert.throws(() => applySourcePatch('a\nx = 2\n', patch), /a\.go does not apply: text not found/);
  });

  it('refuse source where their text occurs more than once', () => {
    assert.throws(() => applySourcePatch('x = 0\nx = 0\n', patch), /more than once/);
  });
});
