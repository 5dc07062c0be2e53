import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { selectorToString } from '../../../src/runtime/labels.ts';

describe('selectorToString', () => {
  it('orders the keys by bytes, as labels.Selector.String() does in Go', () => {
    // A locale's collation would put "a" before "B" and ignore punctuation; Go's sort.Strings does neither.
    assert.equal(
      selectorToString({ matchLabels: { b: '1', a: '2', B: '3', 'a.b': '4', 'a-b': '5' } }),
      'B=3,a=2,a-b=5,a.b=4,b=1',
    );
  });

  it('writes matchExpressions after the labels, their values sorted', () => {
    assert.equal(
      selectorToString({
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['b', 'a'] },
          { key: 'canary', operator: 'DoesNotExist' },
        ],
      }),
      'app=web,tier in (a,b),!canary',
    );
  });
});
