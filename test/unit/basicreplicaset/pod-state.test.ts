import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  isPodActive,
  isPodAvailable,
  isPodReady,
  maxContainerRestarts,
  nextAvailableIn,
  podDeletionCost,
  podReadySince,
} from '../../../src/controllers/basicreplicaset/logic/pod-state.ts';
import { pod } from './pods.ts';

const NOW = Date.UTC(2024, 5, 1, 12, 0, 0);

describe('isPodActive', () => {
  const cases: [name: string, options: Parameters<typeof pod>[1], expected: boolean][] = [
    ['running', { phase: 'Running' }, true],
    ['pending', { phase: 'Pending' }, true],
    ['unknown', { phase: 'Unknown' }, true],
    ['succeeded', { phase: 'Succeeded' }, false],
    ['failed', { phase: 'Failed' }, false],
    ['terminating', { phase: 'Running', deleting: true }, false],
  ];
  for (const [name, options, expected] of cases) {
    it(`${name} -> ${expected}`, () => assert.equal(isPodActive(pod('p', options)), expected));
  }
});

describe('isPodReady and podReadySince', () => {
  it('reads the Ready condition', () => {
    assert.equal(isPodReady(pod('p', { readySince: NOW })), true);
    assert.equal(isPodReady(pod('p')), false);
    assert.equal(isPodReady({ metadata: { name: 'bare' } }), false);
    assert.equal(podReadySince(pod('p', { readySince: NOW - 5 })), NOW - 5);
    assert.equal(podReadySince(pod('p', { readySince: true })), undefined);
    assert.equal(podReadySince(pod('p')), undefined);
  });
  it('accepts RFC 3339 strings from raw JSON', () => {
    const raw = pod('p', { readySince: NOW });
    (raw.status!.conditions![1] as { lastTransitionTime: unknown }).lastTransitionTime = new Date(
      NOW,
    ).toISOString();
    assert.equal(podReadySince(raw), NOW);
  });
});

describe('isPodAvailable and nextAvailableIn', () => {
  const cases: [
    name: string,
    options: Parameters<typeof pod>[1],
    minReady: number,
    available: boolean,
    next: number | undefined,
  ][] = [
    ['not ready', {}, 0, false, undefined],
    ['ready, minReadySeconds 0', { readySince: NOW }, 0, true, undefined],
    ['ready without a time, minReadySeconds 0', { readySince: true }, 0, true, undefined],
    ['ready without a time, minReadySeconds 10', { readySince: true }, 10, false, undefined],
    ['ready 4s of 10s', { readySince: NOW - 4000 }, 10, false, 6001],
    ['ready exactly 10s of 10s', { readySince: NOW - 10_000 }, 10, false, 1],
    ['ready 11s of 10s', { readySince: NOW - 11_000 }, 10, true, undefined],
  ];
  for (const [name, options, minReady, available, next] of cases) {
    it(name, () => {
      assert.equal(isPodAvailable(pod('p', options), minReady, NOW), available);
      assert.equal(nextAvailableIn(pod('p', options), minReady, NOW), next);
    });
  }
  it('the predicted moment is the first at which the pod is available', () => {
    const p = pod('p', { readySince: NOW - 4000 });
    const wait = nextAvailableIn(p, 10, NOW)!;
    assert.equal(isPodAvailable(p, 10, NOW + wait - 1), false);
    assert.equal(isPodAvailable(p, 10, NOW + wait), true);
  });
});

describe('podDeletionCost', () => {
  const cases: [value: string | undefined, expected: number][] = [
    [undefined, 0],
    ['100', 100],
    ['-5', -5],
    ['0', 0],
    ['-0', 0],
    ['+5', 0],
    ['007', 0],
    ['abc', 0],
    ['', 0],
    ['1.5', 0],
    ['2147483647', 2147483647],
    ['2147483648', 0],
    ['-2147483648', -2147483648],
    ['-2147483649', 0],
  ];
  for (const [value, expected] of cases) {
    it(`${JSON.stringify(value)} -> ${expected}`, () =>
      assert.equal(podDeletionCost(pod('p', { deletionCost: value })), expected));
  }
});

describe('maxContainerRestarts', () => {
  it('takes the highest count, 0 without statuses', () => {
    assert.equal(maxContainerRestarts(pod('p', { restarts: [1, 7, 3] })), 7);
    assert.equal(maxContainerRestarts({ metadata: { name: 'bare' } }), 0);
  });
});
