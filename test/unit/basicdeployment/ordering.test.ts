import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  sortByCreation,
  sortBySizeNewer,
  sortBySizeOlder,
} from '../../../src/controllers/basicdeployment/logic/ordering.ts';

const sets = [
  { name: 'b', specReplicas: 2, creationTimestamp: '2020-01-02T00:00:00Z' },
  { name: 'a', specReplicas: 2, creationTimestamp: '2020-01-02T00:00:00Z' },
  { name: 'new', specReplicas: 2, creationTimestamp: new Date('2020-01-03T00:00:00Z') },
  { name: 'big', specReplicas: 5, creationTimestamp: Date.UTC(2020, 0, 1) },
  { name: 'unknown', specReplicas: 1 },
];
const names = (list: { name: string }[]) => list.map((s) => s.name);

describe('replica set ordering', () => {
  it('by creation: oldest first, missing time first, ties by name', () => {
    assert.deepEqual(names(sortByCreation(sets)), ['unknown', 'big', 'a', 'b', 'new']);
  });
  it('by size, newer first on ties (scaling up)', () => {
    assert.deepEqual(names(sortBySizeNewer(sets)), ['big', 'new', 'b', 'a', 'unknown']);
  });
  it('by size, older first on ties (scaling down)', () => {
    assert.deepEqual(names(sortBySizeOlder(sets)), ['big', 'a', 'b', 'new', 'unknown']);
  });
  it('does not reorder its input', () => {
    const before = names(sets);
    sortByCreation(sets);
    assert.deepEqual(names(sets), before);
  });
});
