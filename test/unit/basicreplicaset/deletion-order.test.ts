import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import {
  logarithmicBucket,
  podsToDeleteInOrder,
  rankByRelatedPodsOnSameNode,
} from '../../../src/controllers/basicreplicaset/logic/deletion-order.ts';
import { type PodOptions, pod } from './pods.ts';

const NOW = Date.UTC(2024, 5, 1, 12, 0, 0);
const MINUTE = 60_000;
const names = (pods: V1Pod[]) => pods.map((p) => p.metadata!.name);

/** Two pods that differ in one respect; `first` must be preferred for deletion. */
const pairs: [rule: string, first: PodOptions, second: PodOptions][] = [
  ['unassigned before assigned', { phase: 'Pending' }, { node: 'n1', phase: 'Pending' }],
  [
    'unassigned before assigned, even when running and ready',
    { readySince: NOW - MINUTE },
    { node: 'n1', readySince: NOW - MINUTE },
  ],
  ['Pending before Unknown', { node: 'n1', phase: 'Pending' }, { node: 'n1', phase: 'Unknown' }],
  ['Unknown before Running', { node: 'n1', phase: 'Unknown' }, { node: 'n1', phase: 'Running' }],
  ['Pending before Running', { node: 'n1', phase: 'Pending' }, { node: 'n1', phase: 'Running' }],
  ['not ready before ready', { node: 'n1' }, { node: 'n1', readySince: NOW - MINUTE }],
  ['lower deletion cost first', { node: 'n1', deletionCost: '-10' }, { node: 'n1' }],
  [
    'lower deletion cost first, positive',
    { node: 'n1', deletionCost: '2' },
    { node: 'n1', deletionCost: '5' },
  ],
  [
    'invalid deletion cost counts as 0',
    { node: 'n1', deletionCost: '+7' },
    { node: 'n1', deletionCost: '1' },
  ],
  [
    'ready for less time first',
    { node: 'n1', readySince: NOW - 5000 },
    { node: 'n1', readySince: NOW - 60 * MINUTE },
  ],
  ['unknown ready time first', { node: 'n1', readySince: true }, { node: 'n1', readySince: NOW - 5000 }],
  ['more restarts first', { node: 'n1', restarts: [0, 4] }, { node: 'n1', restarts: [2] }],
  ['newer creation first', { node: 'n1', created: NOW - 5000 }, { node: 'n1', created: NOW - 60 * MINUTE }],
  ['unknown creation time first', { node: 'n1' }, { node: 'n1', created: NOW - 5000 }],
];

describe('podsToDeleteInOrder: one rule at a time', () => {
  for (const [rule, firstOptions, secondOptions] of pairs) {
    it(rule, () => {
      const first = pod('first', { uid: 'z', ...firstOptions });
      const second = pod('second', { uid: 'a', ...secondOptions });
      assert.deepEqual(names(podsToDeleteInOrder([second, first], 1, NOW)), ['first']);
      assert.deepEqual(names(podsToDeleteInOrder([first, second], 1, NOW)), ['first']);
    });
  }
});

describe('podsToDeleteInOrder: rule precedence', () => {
  it('deletion cost outranks crowded nodes', () => {
    const cheap = pod('cheap', { node: 'quiet', deletionCost: '-1', readySince: NOW - MINUTE });
    const crowded = pod('crowded', { node: 'busy', readySince: NOW - MINUTE });
    const related = [cheap, crowded, pod('x', { node: 'busy' }), pod('y', { node: 'busy' })];
    assert.deepEqual(names(podsToDeleteInOrder([crowded, cheap], 1, NOW, related)), ['cheap']);
  });
  it('pods on nodes with more related active pods go before younger pods', () => {
    const crowded = pod('crowded', { node: 'busy', readySince: NOW - 60 * MINUTE });
    const young = pod('young', { node: 'quiet', readySince: NOW - 1000 });
    const related = [
      crowded,
      young,
      pod('sibling', { node: 'busy' }),
      pod('gone', { node: 'quiet', phase: 'Failed' }),
    ];
    assert.deepEqual(names(podsToDeleteInOrder([young, crowded], 1, NOW, related)), ['crowded']);
  });
  it('readiness outranks deletion cost', () => {
    const notReady = pod('not-ready', { node: 'n1', deletionCost: '100' });
    const ready = pod('ready', { node: 'n1', deletionCost: '-100', readySince: NOW - MINUTE });
    assert.deepEqual(names(podsToDeleteInOrder([ready, notReady], 1, NOW)), ['not-ready']);
  });
  it('orders a mixed set completely', () => {
    const pods = [
      pod('old-ready', { uid: '1', node: 'n1', readySince: NOW - 120 * MINUTE, created: NOW - 121 * MINUTE }),
      pod('restarting', {
        uid: '2',
        node: 'n1',
        readySince: NOW - 120 * MINUTE,
        created: NOW - 121 * MINUTE,
        restarts: [9],
      }),
      pod('pending', { uid: '3', node: 'n1', phase: 'Pending' }),
      pod('unscheduled', { uid: '4', phase: 'Pending' }),
      pod('not-ready', { uid: '5', node: 'n1' }),
      pod('young-ready', { uid: '6', node: 'n1', readySince: NOW - 2000 }),
      pod('unknown', { uid: '7', node: 'n1', phase: 'Unknown' }),
      pod('protected', { uid: '8', node: 'n1', readySince: NOW - 2000, deletionCost: '1000' }),
    ];
    assert.deepEqual(names(podsToDeleteInOrder(pods, pods.length - 1, NOW)), [
      'unscheduled',
      'pending',
      'unknown',
      'not-ready',
      'young-ready',
      'restarting',
      'old-ready',
    ]);
  });
});

describe('podsToDeleteInOrder: logarithmic scale-down', () => {
  // 10s and 12s ago share the bucket floor(log2(age in ns)) = 33.
  const olderReady = pod('older-ready', { uid: 'a', node: 'n1', readySince: NOW - 12_000 });
  const newerReady = pod('newer-ready', { uid: 'b', node: 'n1', readySince: NOW - 10_000 });

  it('treats ages in the same power-of-two bucket as equal and breaks the tie by UID', () => {
    assert.equal(logarithmicBucket(NOW - 12_000, NOW), logarithmicBucket(NOW - 10_000, NOW));
    assert.deepEqual(names(podsToDeleteInOrder([newerReady, olderReady], 1, NOW)), ['older-ready']);
  });
  it('compares exact times when turned off', () => {
    assert.deepEqual(
      names(
        podsToDeleteInOrder([olderReady, newerReady], 1, NOW, undefined, { logarithmicScaleDown: false }),
      ),
      ['newer-ready'],
    );
  });
  it('still prefers a clearly younger pod', () => {
    const young = pod('young', { uid: 'z', node: 'n1', readySince: NOW - 1000 });
    assert.deepEqual(names(podsToDeleteInOrder([olderReady, young], 1, NOW)), ['young']);
  });
  it('applies the same buckets to creation times', () => {
    const a = pod('a', { uid: 'a', node: 'n1', created: NOW - 12_000 });
    const b = pod('b', { uid: 'b', node: 'n1', created: NOW - 10_000 });
    assert.deepEqual(names(podsToDeleteInOrder([b, a], 1, NOW)), ['a']);
    assert.deepEqual(names(podsToDeleteInOrder([a, b], 1, NOW, undefined, { logarithmicScaleDown: false })), [
      'b',
    ]);
  });
  it('buckets: -1 for times not in the past, log2 of nanoseconds otherwise', () => {
    assert.equal(logarithmicBucket(NOW, NOW), -1);
    assert.equal(logarithmicBucket(NOW + 5, NOW), -1);
    assert.equal(logarithmicBucket(NOW - 1, NOW), 19); // 1e6 ns
    assert.equal(logarithmicBucket(NOW - 1000, NOW), 29); // 1e9 ns
  });
});

describe('podsToDeleteInOrder: counts', () => {
  const pods = [pod('a', { node: 'n1', readySince: NOW - 1000 }), pod('b', { phase: 'Pending' })];
  it('returns nothing for 0 or less', () => {
    assert.deepEqual(podsToDeleteInOrder(pods, 0, NOW), []);
    assert.deepEqual(podsToDeleteInOrder(pods, -2, NOW), []);
  });
  it('returns every pod, unranked, when all go', () => {
    assert.deepEqual(names(podsToDeleteInOrder(pods, 2, NOW)), ['a', 'b']);
    assert.deepEqual(names(podsToDeleteInOrder(pods, 5, NOW)), ['a', 'b']);
  });
  it('does not reorder its input', () => {
    podsToDeleteInOrder(pods, 1, NOW);
    assert.deepEqual(names(pods), ['a', 'b']);
  });
});

describe('rankByRelatedPodsOnSameNode', () => {
  it('counts active related pods per node', () => {
    const a = pod('a', { node: 'n1' });
    const b = pod('b', { node: 'n2' });
    const related = [
      a,
      b,
      pod('c', { node: 'n1' }),
      pod('d', { node: 'n1', deleting: true }),
      pod('e', { node: 'n1', phase: 'Succeeded' }),
    ];
    assert.deepEqual(rankByRelatedPodsOnSameNode([a, b, pod('f', { node: 'n3' })], related), [2, 1, 0]);
  });
});
