// Where the restore of one volume stands, from the claim, the VolumeBackup and the Job (pure).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { RESTORED_FROM_ANNOTATION } from '../../../examples/statefulset-provider/src/names.ts';
import { restoreState } from '../../../examples/statefulset-provider/src/restore.ts';
import type { MachineVolume } from '../../../src/apis/index.ts';
import { backup, finished } from './fixtures.ts';

const volume: MachineVolume = {
  name: 'data',
  size: '1Gi',
  mountPath: '/data',
  restoreFrom: { volumeBackup: 'old', volume: 'data' },
};
const claim: V1PersistentVolumeClaim = { metadata: { name: 'data-db-0' } };
const job: V1Job = { metadata: { name: 'db-data-restore' } };

describe('restoreState', () => {
  it('has nothing to do for a volume without restoreFrom', () => {
    assert.deepEqual(restoreState({ ...volume, restoreFrom: undefined }, undefined, undefined, undefined), {
      kind: 'none',
    });
  });

  it('waits, not fails, for a VolumeBackup that is missing or not Completed', () => {
    const missing = restoreState(volume, undefined, undefined, undefined);
    assert.equal(missing.kind, 'waiting');
    assert.equal(missing.kind === 'waiting' && missing.reason, 'BackupNotFound');
    assert.match(JSON.stringify(missing), /VolumeBackup old, which does not exist in this namespace/);
    const pending = restoreState(volume, undefined, backup('Pending'), undefined);
    assert.equal(pending.kind === 'waiting' && pending.reason, 'WaitingForBackup');
  });

  it('fails for a failed backup or one without the volume', () => {
    assert.equal(restoreState(volume, undefined, backup('Failed'), undefined).kind, 'failed');
    const other = restoreState(
      volume,
      undefined,
      backup('Completed', [{ name: 'logs', backupClaimName: 'x' }]),
      undefined,
    );
    assert.equal(other.kind === 'failed' && other.reason, 'BackupVolumeNotFound');
  });

  it('starts from the backup claim of a Completed VolumeBackup', () => {
    assert.deepEqual(restoreState(volume, undefined, backup('Completed'), undefined), {
      kind: 'start',
      backupClaimName: 'old-data',
    });
  });

  it('follows the Job: copying, succeeded, failed (terminal)', () => {
    assert.equal(restoreState(volume, claim, backup('Completed'), job).kind, 'copying');
    assert.deepEqual(restoreState(volume, claim, backup('Completed'), finished(job, 'Complete')), {
      kind: 'succeeded',
      jobName: 'db-data-restore',
    });
    const failed = restoreState(
      volume,
      claim,
      backup('Completed'),
      finished(job, 'Failed', 'DeadlineExceeded'),
    );
    assert.equal(failed.kind === 'failed' && failed.reason, 'RestoreFailed');
    assert.match(JSON.stringify(failed), /DeadlineExceeded/);
  });

  it('is done once the claim is marked, whatever became of the backup or the Job', () => {
    const marked = {
      metadata: { name: 'data-db-0', annotations: { [RESTORED_FROM_ANNOTATION]: 'old/data' } },
    };
    assert.deepEqual(restoreState(volume, marked, undefined, undefined), { kind: 'restored' });
    const otherSource = { metadata: { annotations: { [RESTORED_FROM_ANNOTATION]: 'older/data' } } };
    assert.equal(restoreState(volume, otherSource, backup('Completed'), undefined).kind, 'start');
  });
});
