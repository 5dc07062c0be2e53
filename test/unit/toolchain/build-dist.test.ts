import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildDist } from '../../../e2e/support/build-dist.ts';

describe('building dist/ for the processes that start the operator', () => {
  it('builds at most once for concurrent callers, then finds dist/ current', {
    timeout: 300_000,
  }, async () => {
    const outcomes = await Promise.all([buildDist(), buildDist(), buildDist()]);
    assert.ok(outcomes.filter((o) => o === 'built').length <= 1, outcomes.join(', '));
    assert.equal(await buildDist(), 'current');
  });
});
