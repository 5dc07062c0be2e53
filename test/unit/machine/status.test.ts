import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Condition } from '../../../src/apis/index.ts';
import {
  computeMachineStatus,
  type MachineObservations,
  machinePhase,
  type PodObservation,
  type VolumeObservation,
  volumesVerdict,
} from '../../../src/controllers/machine/status.ts';

const NOW = new Date('2025-01-01T00:00:00Z');
const bound = (name: string): VolumeObservation => ({
  name,
  claimName: `web-${name}`,
  claimPhase: 'Bound',
  restore: { kind: 'none' },
});
const runningPod: PodObservation = {
  name: 'web',
  exists: true,
  terminating: false,
  phase: 'Running',
  ready: true,
};

function obs(overrides: Partial<MachineObservations> = {}): MachineObservations {
  return {
    generation: 2,
    deleting: false,
    stopped: false,
    volumes: [bound('data'), bound('logs')],
    pod: runningPod,
    ...overrides,
  };
}

describe('machinePhase', () => {
  it('goes Pending -> Provisioning -> Running', () => {
    const pendingClaim = { ...bound('data'), claimPhase: 'Pending' };
    const noPod: PodObservation = { name: 'web', exists: false, terminating: false, ready: false };
    assert.equal(machinePhase(obs({ volumes: [pendingClaim], pod: noPod })), 'Pending');
    assert.equal(machinePhase(obs({ pod: noPod })), 'Provisioning');
    assert.equal(
      machinePhase(obs({ pod: { ...runningPod, phase: 'Pending', ready: false } })),
      'Provisioning',
    );
    assert.equal(machinePhase(obs()), 'Running');
  });

  it('is Pending while a restore waits for its backup, Provisioning while it copies', () => {
    const waiting = {
      ...bound('data'),
      restore: { kind: 'waiting', reason: 'BackupNotFound', message: 'm' } as const,
    };
    assert.equal(machinePhase(obs({ volumes: [waiting] })), 'Pending');
    const copying = { ...bound('data'), restore: { kind: 'restoring', message: 'm' } as const };
    assert.equal(
      machinePhase(obs({ volumes: [copying], pod: { ...runningPod, exists: false } })),
      'Provisioning',
    );
  });

  it('is Failed when the pod failed, a restore failed or a name is taken', () => {
    assert.equal(
      machinePhase(obs({ pod: { ...runningPod, phase: 'Failed', failure: 'OOMKilled' } })),
      'Failed',
    );
    const failedRestore = {
      ...bound('data'),
      restore: { kind: 'failed', reason: 'RestoreFailed', message: 'm' } as const,
    };
    assert.equal(machinePhase(obs({ volumes: [failedRestore] })), 'Failed');
    assert.equal(machinePhase(obs({ volumes: [{ ...bound('data'), conflict: 'taken' }] })), 'Failed');
  });

  it('is Failed, saying why, while the API server refuses the pod', () => {
    const noPod: PodObservation = { name: 'web', exists: false, terminating: false, ready: false };
    const refused = obs({ pod: { ...noPod, refused: 'pods "web" is forbidden: exceeded quota' } });
    assert.equal(machinePhase(refused), 'Failed');
    const ready = computeMachineStatus(undefined, refused, NOW).conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.reason, 'PodRefused');
    assert.match(ready?.message ?? '', /refused pod web: pods "web" is forbidden: exceeded quota/);
  });

  it('is Failed, saying why, while the API server refuses a claim', () => {
    const refused = obs({
      volumes: [
        { name: 'data', claimName: 'web-data', refused: 'exceeded quota', restore: { kind: 'none' } },
      ],
      pod: { name: 'web', exists: false, terminating: false, ready: false },
    });
    assert.equal(machinePhase(refused), 'Failed');
    const status = computeMachineStatus(undefined, refused, NOW);
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.reason]),
      [
        ['VolumesReady', 'ClaimRefused'],
        ['Ready', 'ClaimRefused'],
      ],
    );
  });

  it('is Pending, saying why, while creation waits for the backup finalizer', () => {
    const noPod: PodObservation = { name: 'web', exists: false, terminating: false, ready: false };
    const waiting = obs({
      volumes: [{ ...bound('data'), claimPhase: undefined }],
      pod: noPod,
      waiting: { reason: 'WaitingForBackupFinalizer', message: 'waiting for the finalizer' },
    });
    assert.equal(machinePhase(waiting), 'Pending');
    const status = computeMachineStatus(undefined, waiting, NOW);
    const ready = status.conditions?.find((c) => c.type === 'Ready');
    assert.deepEqual([ready?.status, ready?.reason], ['False', 'WaitingForBackupFinalizer']);
  });

  it('is Stopping then Stopped while being deleted', () => {
    assert.equal(machinePhase(obs({ deleting: true })), 'Stopping');
    assert.equal(machinePhase(obs({ deleting: true, stopped: true })), 'Stopped');
  });
});

describe('volumesVerdict', () => {
  it('names the claims still waiting to bind', () => {
    const v = volumesVerdict([bound('data'), { ...bound('logs'), claimPhase: undefined }]);
    assert.deepEqual(v, {
      status: 'False',
      reason: 'ClaimsPending',
      message: 'waiting for claims to bind: web-logs (not created)',
    });
  });

  it('is True when every claim is bound and restored', () => {
    assert.deepEqual(volumesVerdict([bound('data')]), {
      status: 'True',
      reason: 'ClaimsBound',
      message: 'all 1 claims are bound',
    });
  });
});

describe('computeMachineStatus', () => {
  it('reports phase, ready, claims, observedGeneration and its two conditions', () => {
    const status = computeMachineStatus(undefined, obs(), NOW);
    assert.equal(status.phase, 'Running');
    assert.equal(status.ready, true);
    assert.equal(status.observedGeneration, 2);
    assert.deepEqual(status.volumes, [
      { name: 'data', claimName: 'web-data', phase: 'Bound' },
      { name: 'logs', claimName: 'web-logs', phase: 'Bound' },
    ]);
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.status, c.reason, c.observedGeneration]),
      [
        ['VolumesReady', 'True', 'ClaimsBound', 2],
        ['Ready', 'True', 'PodReady', 2],
      ],
    );
  });

  it("sends only its own conditions, never the VolumeBackup controller's", () => {
    const theirs: Condition = {
      type: 'VolumeBackup',
      status: 'False',
      reason: 'BackupInProgress',
      message: 'copying',
      lastTransitionTime: '2024-12-31T00:00:00Z',
      observedGeneration: 3,
    };
    const status = computeMachineStatus(
      { conditions: [theirs] },
      obs({ deleting: true, stopped: true }),
      NOW,
    );
    assert.deepEqual(status.conditions?.map((c) => c.type).sort(), ['Ready', 'VolumesReady']);
    assert.equal(status.conditions?.find((c) => c.type === 'Ready')?.reason, 'Stopped');
  });

  it('says why it is not ready: a failed pod, with its reason', () => {
    const status = computeMachineStatus(
      undefined,
      obs({ pod: { ...runningPod, phase: 'Failed', ready: false, failure: 'Evicted; low on memory' } }),
      NOW,
    );
    const ready = status.conditions?.find((c) => c.type === 'Ready');
    assert.equal(status.phase, 'Failed');
    assert.equal(ready?.reason, 'PodFailed');
    assert.match(ready?.message ?? '', /pod web has failed: Evicted; low on memory; delete the pod/);
  });

  it('moves lastTransitionTime only when a status changes', () => {
    const first = computeMachineStatus(undefined, obs(), NOW);
    const later = new Date('2025-01-01T01:00:00Z');
    const same = computeMachineStatus(first, obs(), later);
    assert.deepEqual(same.conditions, first.conditions);
    const changed = computeMachineStatus(first, obs({ pod: { ...runningPod, ready: false } }), later);
    assert.equal(
      changed.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime,
      '2025-01-01T01:00:00Z',
    );
  });
});
