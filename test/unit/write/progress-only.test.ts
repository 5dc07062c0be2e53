import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isProgressOnly } from '../../../src/runtime/write/progress-only.ts';

const ready = (status: 'True' | 'False') => [
  {
    type: 'Ready',
    status,
    reason: status === 'True' ? 'Done' : 'Waiting',
    message: '',
    lastTransitionTime: 't',
  },
];

describe('isProgressOnly', () => {
  const base = { observedGeneration: 2, replicas: 3, available: 1, conditions: ready('False') };
  it('accepts counts that only rise', () => {
    assert.equal(isProgressOnly(base, { ...base, available: 2 }, ['replicas', 'available']), true);
  });
  it('rejects a falling count, a condition change, a new generation, or no current status', () => {
    assert.equal(isProgressOnly(base, { ...base, available: 0 }, ['replicas', 'available']), false);
    assert.equal(
      isProgressOnly(base, { ...base, conditions: ready('True') }, ['replicas', 'available']),
      false,
    );
    assert.equal(isProgressOnly(base, { ...base, observedGeneration: 3 }, ['replicas', 'available']), false);
    assert.equal(isProgressOnly(undefined, base, ['replicas', 'available']), false);
  });
  it('treats a reason moving between the given progress reasons as progress, and no other reason change', () => {
    const progressing = (reason: string) => [
      { type: 'Progressing', status: 'True' as const, reason, message: '', lastTransitionTime: 't' },
    ];
    const from = { ...base, conditions: progressing('NewReplicaSetCreated') };
    const reasons = new Set(['NewReplicaSetCreated', 'ReplicaSetUpdated']);
    const to = (reason: string) => ({ ...from, available: 2, conditions: progressing(reason) });
    assert.equal(isProgressOnly(from, to('ReplicaSetUpdated'), ['available'], reasons), true);
    assert.equal(isProgressOnly(from, to('NewReplicaSetAvailable'), ['available'], reasons), false);
    assert.equal(isProgressOnly(from, to('ReplicaSetUpdated'), ['available']), false);
  });
});
