import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Condition } from '../../../src/apis/index.ts';
import { conditionPatch } from '../../../src/controllers/volumebackup/machine-condition.ts';
import { machine, UID } from './fixtures.ts';

const NOW = new Date('2025-01-01T00:00:00Z');
const input = {
  type: 'VolumeBackup',
  status: 'False' as const,
  reason: 'BackupInProgress',
  message: 'copying',
  observedGeneration: 2,
};
const theirs: Condition = {
  type: 'Ready',
  status: 'False',
  reason: 'Stopped',
  message: 'stopped',
  lastTransitionTime: '2024-12-31T00:00:00Z',
};
const entry = { ...input, lastTransitionTime: '2025-01-01T00:00:00Z' };

describe('conditionPatch', () => {
  it('appends to an existing list, testing the whole list first', () => {
    const m = machine();
    m.status = { phase: 'Stopped', conditions: [theirs] };
    assert.deepEqual(conditionPatch(m, input, NOW), [
      { op: 'test', path: '/metadata/uid', value: UID },
      { op: 'test', path: '/status/conditions', value: [theirs] },
      { op: 'add', path: '/status/conditions/-', value: entry },
    ]);
  });

  it('replaces only its own entry, testing that the index still holds its type', () => {
    const m = machine();
    const old = {
      ...entry,
      reason: 'BackupPending',
      message: 'waiting',
      lastTransitionTime: '2024-12-30T00:00:00Z',
    };
    m.status = { conditions: [theirs, old] };
    assert.deepEqual(conditionPatch(m, input, NOW), [
      { op: 'test', path: '/metadata/uid', value: UID },
      { op: 'test', path: '/status/conditions/1/type', value: 'VolumeBackup' },
      // Same status (False): the transition time is kept.
      {
        op: 'replace',
        path: '/status/conditions/1',
        value: { ...entry, lastTransitionTime: '2024-12-30T00:00:00Z' },
      },
    ]);
  });

  it('writes nothing when the condition already says the same', () => {
    const m = machine();
    m.status = { conditions: [theirs, entry] };
    assert.equal(conditionPatch(m, input, NOW), undefined);
  });

  it('adds the list, or the status, guarded by resourceVersion, when there is none', () => {
    const noList = machine();
    noList.status = { phase: 'Stopping' };
    assert.deepEqual(conditionPatch(noList, input, NOW), [
      { op: 'test', path: '/metadata/uid', value: UID },
      { op: 'test', path: '/metadata/resourceVersion', value: '10' },
      { op: 'add', path: '/status/conditions', value: [entry] },
    ]);
    assert.deepEqual(conditionPatch(machine(), input, NOW)?.at(-1), {
      op: 'add',
      path: '/status',
      value: { conditions: [entry] },
    });
  });
});
