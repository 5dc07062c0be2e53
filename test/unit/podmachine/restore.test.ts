import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { MachineVolume, VolumeBackup } from '../../../src/apis/index.ts';
import { jobOutcome } from '../../../src/apis/index.ts';
import { RESTORED_FROM_ANNOTATION } from '../../../src/controllers/podmachine/names.ts';
import { restoreState } from '../../../src/controllers/podmachine/restore.ts';

const volume: MachineVolume = {
  name: 'data',
  size: '1Gi',
  mountPath: '/data',
  restoreFrom: { volumeBackup: 'old-1234abcd', volume: 'data' },
};

function backup(
  phase: VolumeBackup['status'] extends infer S ? (S extends { phase?: infer P } ? P : never) : never,
) {
  return {
    apiVersion: 'infra.basicoperator.dev/v1alpha1',
    kind: 'VolumeBackup',
    metadata: { name: 'old-1234abcd', namespace: 'ns' },
    spec: { machineName: 'old', machineUID: 'u', volumes: [{ name: 'data', claimName: 'old-data' }] },
    status: { phase, volumes: [{ name: 'data', backupClaimName: 'old-1234abcd-data' }] },
  } as VolumeBackup;
}

const claim = (annotations?: Record<string, string>): V1PersistentVolumeClaim => ({
  metadata: { name: 'web-data', annotations },
});

function job(condition?: { type: string; reason?: string; message?: string }): V1Job {
  return {
    metadata: { name: 'web-data-restore' },
    status: condition ? { conditions: [{ ...condition, status: 'True' }] } : {},
  };
}

describe('restoreState', () => {
  it('has nothing to do for a volume without restoreFrom', () => {
    assert.deepEqual(restoreState({ ...volume, restoreFrom: undefined }, claim(), undefined, undefined), {
      kind: 'none',
    });
  });

  it('waits, saying so, while the VolumeBackup is missing or not Completed', () => {
    const missing = restoreState(volume, claim(), undefined, undefined);
    assert.equal(missing.kind, 'waiting');
    assert.equal(missing.kind === 'waiting' && missing.reason, 'BackupNotFound');
    const running = restoreState(volume, claim(), backup('Running'), undefined);
    assert.equal(running.kind === 'waiting' && running.reason, 'WaitingForBackup');
    assert.match(running.kind === 'waiting' ? running.message : '', /which is Running/);
  });

  it('fails for a Failed backup or a volume the backup does not have', () => {
    const failed = restoreState(volume, claim(), backup('Failed'), undefined);
    assert.equal(failed.kind === 'failed' && failed.reason, 'BackupFailed');
    const other = restoreState(
      { ...volume, restoreFrom: { volumeBackup: 'old-1234abcd', volume: 'cache' } },
      claim(),
      backup('Completed'),
      undefined,
    );
    assert.equal(other.kind === 'failed' && other.reason, 'BackupVolumeNotFound');
  });

  it('starts a Job from the backup claim once the backup Completed', () => {
    assert.deepEqual(restoreState(volume, claim(), backup('Completed'), undefined), {
      kind: 'start-job',
      backupClaimName: 'old-1234abcd-data',
    });
  });

  it('follows the Job: running, succeeded, failed', () => {
    assert.equal(restoreState(volume, claim(), backup('Completed'), job()).kind, 'restoring');
    assert.equal(
      restoreState(volume, claim(), backup('Completed'), job({ type: 'Complete' })).kind,
      'job-succeeded',
    );
    const failed = restoreState(
      volume,
      claim(),
      backup('Completed'),
      job({
        type: 'Failed',
        reason: 'BackoffLimitExceeded',
        message: 'Job has reached the specified backoff limit',
      }),
    );
    assert.equal(failed.kind === 'failed' && failed.reason, 'RestoreFailed');
    assert.match(failed.kind === 'failed' ? failed.message : '', /BackoffLimitExceeded: Job has reached/);
  });

  it('is done for good once the claim is marked, even if the backup or Job are gone', () => {
    const marked = claim({ [RESTORED_FROM_ANNOTATION]: 'old-1234abcd/data' });
    assert.deepEqual(restoreState(volume, marked, undefined, undefined), { kind: 'restored' });
    const otherSource = claim({ [RESTORED_FROM_ANNOTATION]: 'another/data' });
    assert.equal(restoreState(volume, otherSource, undefined, undefined).kind, 'waiting');
  });
});

describe('jobOutcome', () => {
  it('reads Complete and Failed conditions; anything else is still running', () => {
    assert.deepEqual(jobOutcome(job({ type: 'Complete' })), { done: 'succeeded' });
    assert.deepEqual(jobOutcome(job({ type: 'Failed' })), { done: 'failed', message: 'the Job failed' });
    assert.equal(jobOutcome(job({ type: 'Suspended' })), undefined);
    assert.equal(jobOutcome(job()), undefined);
  });
});
