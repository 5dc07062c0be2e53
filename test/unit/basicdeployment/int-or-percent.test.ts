import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  InvalidIntOrPercentError,
  parseIntOrPercent,
  resolveIntOrPercent,
} from '../../../src/controllers/basicdeployment/logic/int-or-percent.ts';

describe('parseIntOrPercent', () => {
  it('accepts non-negative integers and percentages', () => {
    assert.deepEqual(parseIntOrPercent(3), { value: 3, isPercent: false });
    assert.deepEqual(parseIntOrPercent(0), { value: 0, isPercent: false });
    assert.deepEqual(parseIntOrPercent('25%'), { value: 25, isPercent: true });
    assert.deepEqual(parseIntOrPercent('150%'), { value: 150, isPercent: true });
  });
  for (const bad of ['abc', '-1', '-5%', '3', '1.5%', '%', '', ' 5%', '5 %'] as const) {
    it(`rejects ${JSON.stringify(bad)} with a clear error`, () => {
      assert.throws(
        () => parseIntOrPercent(bad, 'maxSurge'),
        (error: unknown) =>
          error instanceof InvalidIntOrPercentError &&
          error.message.startsWith('maxSurge:') &&
          error.message.includes(JSON.stringify(bad)),
      );
    });
  }
  for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    it(`rejects the number ${bad}`, () => {
      assert.throws(() => parseIntOrPercent(bad), InvalidIntOrPercentError);
    });
  }
});

describe('resolveIntOrPercent', () => {
  const cases: [value: number | string, total: number, rounding: 'up' | 'down', expected: number][] = [
    [3, 10, 'up', 3],
    [3, 10, 'down', 3],
    [15, 10, 'down', 15],
    ['25%', 10, 'up', 3],
    ['25%', 10, 'down', 2],
    ['25%', 4, 'up', 1],
    ['25%', 4, 'down', 1],
    ['39%', 10, 'up', 4],
    ['39%', 10, 'down', 3],
    ['10%', 30, 'up', 3],
    ['1%', 1, 'up', 1],
    ['1%', 1, 'down', 0],
    ['0%', 10, 'up', 0],
    ['100%', 7, 'down', 7],
    ['150%', 10, 'up', 15],
    ['25%', 0, 'up', 0],
  ];
  for (const [value, total, rounding, expected] of cases) {
    it(`${JSON.stringify(value)} of ${total} rounded ${rounding} is ${expected}`, () => {
      assert.equal(resolveIntOrPercent(value, total, rounding), expected);
    });
  }
});
