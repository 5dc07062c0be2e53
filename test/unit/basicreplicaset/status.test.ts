import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { computeStatus } from '../../../src/controllers/basicreplicaset/status.ts';
import { pod } from './pods.ts';
import { replicaSet } from './sets.ts';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const ready = (name: string) => pod(name, { readySince: NOW - 60_000 });
const readyCondition = (status: ReturnType<typeof computeStatus>) =>
  status.conditions?.find((c) => c.type === 'Ready');

describe('BasicReplicaSet computeStatus', () => {
  it('is Ready once every desired replica is available and no pod is left terminating', () => {
    const rs = {
      ...replicaSet('web', { app: 'web' }),
      spec: { ...replicaSet('web', { app: 'web' }).spec, replicas: 2 },
    };
    const during = computeStatus(
      rs,
      [ready('a'), ready('b'), pod('c', { readySince: true, deleting: true })],
      undefined,
      NOW,
    );
    assert.equal(during.replicas, 2, 'a terminating pod is not a replica (apps/v1)');
    assert.equal(during.terminatingReplicas, 1);
    assert.equal(readyCondition(during)?.status, 'False');
    assert.match(readyCondition(during)?.message ?? '', /1 terminating/);
    const after = computeStatus(rs, [ready('a'), ready('b')], undefined, NOW);
    assert.equal(readyCondition(after)?.status, 'True');
  });
});
