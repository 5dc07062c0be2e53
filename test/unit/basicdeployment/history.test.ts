import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type HistorySet,
  maxRevision,
  parseRevision,
  setsToDeleteForHistoryLimit,
  sortByRevision,
} from '../../../src/controllers/basicdeployment/logic/history.ts';

describe('parseRevision', () => {
  const cases: [recorded: string | undefined, expected: number | undefined][] = [
    [undefined, 0],
    ['0', 0],
    ['7', 7],
    ['+3', 3],
    ['', undefined],
    ['abc', undefined],
    ['1.5', undefined],
    ['99999999999999999999', undefined],
  ];
  for (const [recorded, expected] of cases) {
    it(`${JSON.stringify(recorded)} -> ${expected}`, () => assert.equal(parseRevision(recorded), expected));
  }
});

describe('maxRevision', () => {
  it('skips unparsable revisions and is 0 for no sets', () => {
    assert.equal(maxRevision([]), 0);
    assert.equal(maxRevision([{ revision: 3 }, { revision: undefined }, { revision: 5 }]), 5);
  });
});

describe('sortByRevision', () => {
  it('orders by revision, then creation time, then name', () => {
    const sets = [
      { name: 'c', revision: 3, creationTimestamp: '2020-01-01T00:00:00Z' },
      { name: 'b', revision: 1, creationTimestamp: '2020-01-03T00:00:00Z' },
      { name: 'x', revision: 2, creationTimestamp: '2020-01-02T00:00:00Z' },
      { name: 'a', revision: 2, creationTimestamp: '2020-01-02T00:00:00Z' },
    ];
    assert.deepEqual(
      sortByRevision(sets).map((s) => s.name),
      ['b', 'a', 'x', 'c'],
    );
  });
  it('falls back to creation time for unparsable revisions', () => {
    const sets = [
      { name: 'late', revision: undefined, creationTimestamp: '2020-01-03T00:00:00Z' },
      { name: 'early', revision: 9, creationTimestamp: '2020-01-01T00:00:00Z' },
    ];
    assert.deepEqual(
      sortByRevision(sets).map((s) => s.name),
      ['early', 'late'],
    );
  });
});

describe('setsToDeleteForHistoryLimit (upstream cleanupDeployment cases)', () => {
  const set = (
    name: string,
    specReplicas: number,
    statusReplicas: number,
    extra: Partial<HistorySet> = {},
  ): HistorySet => ({
    name,
    specReplicas,
    statusReplicas,
    ...extra,
  });
  const names = (sets: HistorySet[]) => sets.map((s) => s.name);

  it('deletes the excess beyond the limit', () => {
    assert.deepEqual(
      names(setsToDeleteForHistoryLimit([set('foo-1', 0, 0), set('foo-2', 0, 0), set('foo-3', 0, 0)], 1)),
      ['foo-1', 'foo-2'],
    );
  });
  it('only deletes sets with spec and status replicas at 0', () => {
    const sets = [set('foo-1', 0, 0), set('foo-2', 0, 1), set('foo-3', 1, 0), set('foo-4', 1, 1)];
    assert.deepEqual(names(setsToDeleteForHistoryLimit(sets, 0)), ['foo-1']);
  });
  it('a limit of 0 deletes every idle old set', () => {
    assert.deepEqual(names(setsToDeleteForHistoryLimit([set('foo-1', 0, 0), set('foo-2', 0, 0)], 0)), [
      'foo-1',
      'foo-2',
    ]);
  });
  it('keeps sets that still have pods', () => {
    assert.deepEqual(setsToDeleteForHistoryLimit([set('foo-1', 1, 1), set('foo-2', 1, 1)], 0), []);
  });
  it('skips and does not count sets already being deleted', () => {
    assert.deepEqual(setsToDeleteForHistoryLimit([set('foo-1', 0, 0, { deleting: true })], 0), []);
    assert.deepEqual(
      setsToDeleteForHistoryLimit([set('foo-1', 0, 0, { deleting: true }), set('foo-2', 0, 0)], 1),
      [],
    );
  });
  it('keeps everything with MaxInt32 or no limit', () => {
    const sets = [set('foo-1', 0, 0), set('foo-2', 0, 0), set('foo-3', 0, 0)];
    assert.deepEqual(setsToDeleteForHistoryLimit(sets, 2147483647), []);
    assert.deepEqual(setsToDeleteForHistoryLimit(sets, undefined), []);
  });
  it('deletes the lowest revisions first, whatever the creation order', () => {
    const sets = [
      set('r3', 0, 0, { revision: 3, creationTimestamp: '2020-01-01T00:00:00Z' }),
      set('r1', 0, 0, { revision: 1, creationTimestamp: '2020-01-03T00:00:00Z' }),
      set('r2', 0, 0, { revision: 2, creationTimestamp: '2020-01-02T00:00:00Z' }),
    ];
    assert.deepEqual(names(setsToDeleteForHistoryLimit(sets, 1)), ['r1', 'r2']);
  });
  it('keeps a set whose status has not caught up with its spec', () => {
    const sets = [
      set('lagging', 0, 0, { revision: 1, generation: 3, observedGeneration: 2 }),
      set('ok', 0, 0, { revision: 2, generation: 2, observedGeneration: 2 }),
    ];
    assert.deepEqual(names(setsToDeleteForHistoryLimit(sets, 0)), ['ok']);
  });
  it('does not replace a kept candidate with a newer revision', () => {
    const sets = [
      set('r1', 1, 1, { revision: 1 }),
      set('r2', 0, 0, { revision: 2 }),
      set('r3', 0, 0, { revision: 3 }),
    ];
    assert.deepEqual(names(setsToDeleteForHistoryLimit(sets, 2)), []);
  });
});
