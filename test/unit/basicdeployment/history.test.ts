import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type HistorySet,
  maxRevision,
  nextRevision,
  parseRevision,
  setsToDeleteForHistoryLimit,
  sortByRevision,
} from '../../../src/controllers/basicdeployment/logic/history.ts';

describe('parseRevision (upstream Revision: strconv.ParseInt(v, 10, 64))', () => {
  const cases: [recorded: string | undefined, expected: bigint | undefined][] = [
    [undefined, 0n],
    ['0', 0n],
    ['7', 7n],
    ['+3', 3n],
    ['-3', -3n],
    ['007', 7n],
    ['3546343826724305832', 3546343826724305832n],
    ['9223372036854775807', 9223372036854775807n],
    ['-9223372036854775808', -9223372036854775808n],
    ['9223372036854775808', undefined],
    ['-9223372036854775809', undefined],
    ['99999999999999999999', undefined],
    ['', undefined],
    ['abc', undefined],
    ['1.5', undefined],
    ['1_000', undefined],
    [' 1', undefined],
    ['0x10', undefined],
    ['\u0661', undefined],
  ];
  for (const [recorded, expected] of cases) {
    it(`${JSON.stringify(recorded)} -> ${expected}`, () => assert.equal(parseRevision(recorded), expected));
  }
});

describe('maxRevision', () => {
  it('skips unparsable revisions and is 0 for no sets', () => {
    assert.equal(maxRevision([]), 0n);
    assert.equal(maxRevision([{ revision: 3n }, { revision: undefined }, { revision: 5n }]), 5n);
  });
  it('compares int64 revisions exactly, beyond 2^53', () => {
    const revisions = ['3546343826724305833', '3546343826724305832', '9223372036854775808', 'x'];
    assert.equal(maxRevision(revisions.map((r) => ({ revision: parseRevision(r) }))), 3546343826724305833n);
  });
});

describe('nextRevision (upstream maxOldRevision+1, int64)', () => {
  it('adds one exactly beyond 2^53', () => {
    assert.equal(nextRevision(0n), 1n);
    assert.equal(nextRevision(3546343826724305832n), 3546343826724305833n);
    assert.equal(nextRevision(9223372036854775806n), 9223372036854775807n);
  });
  it('wraps after int64 max as Go does', () => {
    assert.equal(nextRevision(9223372036854775807n), -9223372036854775808n);
  });
});

describe('sortByRevision', () => {
  it('orders by revision, then creation time, then name', () => {
    const sets = [
      { name: 'c', revision: 3n, creationTimestamp: '2020-01-01T00:00:00Z' },
      { name: 'b', revision: 1n, creationTimestamp: '2020-01-03T00:00:00Z' },
      { name: 'x', revision: 2n, creationTimestamp: '2020-01-02T00:00:00Z' },
      { name: 'a', revision: 2n, creationTimestamp: '2020-01-02T00:00:00Z' },
    ];
    assert.deepEqual(
      sortByRevision(sets).map((s) => s.name),
      ['b', 'a', 'x', 'c'],
    );
  });
  it('orders revisions beyond 2^53 exactly (equal as doubles)', () => {
    const sets = [
      { name: 'a', revision: 3546343826724305833n, creationTimestamp: '2020-01-01T00:00:00Z' },
      { name: 'b', revision: 3546343826724305832n, creationTimestamp: '2020-01-02T00:00:00Z' },
    ];
    assert.deepEqual(
      sortByRevision(sets).map((s) => s.name),
      ['b', 'a'],
    );
  });
  it('falls back to creation time for unparsable revisions', () => {
    const sets = [
      { name: 'late', revision: undefined, creationTimestamp: '2020-01-03T00:00:00Z' },
      { name: 'early', revision: 9n, creationTimestamp: '2020-01-01T00:00:00Z' },
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
      set('r3', 0, 0, { revision: 3n, creationTimestamp: '2020-01-01T00:00:00Z' }),
      set('r1', 0, 0, { revision: 1n, creationTimestamp: '2020-01-03T00:00:00Z' }),
      set('r2', 0, 0, { revision: 2n, creationTimestamp: '2020-01-02T00:00:00Z' }),
    ];
    assert.deepEqual(names(setsToDeleteForHistoryLimit(sets, 1)), ['r1', 'r2']);
  });
  it('keeps a set whose status has not caught up with its spec', () => {
    const sets = [
      set('lagging', 0, 0, { revision: 1n, generation: 3, observedGeneration: 2 }),
      set('ok', 0, 0, { revision: 2n, generation: 2, observedGeneration: 2 }),
    ];
    assert.deepEqual(names(setsToDeleteForHistoryLimit(sets, 0)), ['ok']);
  });
  it('does not replace a kept candidate with a newer revision', () => {
    const sets = [
      set('r1', 1, 1, { revision: 1n }),
      set('r2', 0, 0, { revision: 2n }),
      set('r3', 0, 0, { revision: 3n }),
    ];
    assert.deepEqual(names(setsToDeleteForHistoryLimit(sets, 2)), []);
  });
});
