// Where the restore of one volume stands, from the claim, the VolumeBackup, the Job and its pods (pure).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { RESTORED_FROM_ANNOTATION } from '../../../examples/statefulset-provider/src/names.ts';
import {
  needsLivePods,
  type RestoreObservation,
  restoreState,
} from '../../../examples/statefulset-provider/src/restore.ts';
import type { MachineVolume } from '../../../src/apis/index.ts';
import { backup, copyPod, copyReport, finished, MANIFEST, OTHER } from './fixtures.ts';

const volume: MachineVolume = {
  name: 'data',
  size: '1Gi',
  mountPath: '/data',
  restoreFrom: { volumeBackup: 'old', volume: 'data' },
};
const claim: V1PersistentVolumeClaim = { metadata: { name: 'data-db-0' } };
const job: V1Job = { metadata: { name: 'db-data-restore', uid: 'job-1' } };
const bound: V1PersistentVolumeClaim = { metadata: { name: 'old-data' }, status: { phase: 'Bound' } };

function observed(overrides: Partial<RestoreObservation> = {}): RestoreObservation {
  return {
    claim: undefined,
    backup: backup('Completed'),
    job: undefined,
    jobPods: [],
    backupClaim: (name) => (name === 'old-data' ? bound : undefined),
    ...overrides,
  };
}

describe('restoreState', () => {
  it('has nothing to do for a volume without restoreFrom', () => {
    assert.deepEqual(restoreState({ ...volume, restoreFrom: undefined }, observed()), { kind: 'none' });
  });

  it('waits, not fails, for a VolumeBackup that is missing or not Completed', () => {
    const missing = restoreState(volume, observed({ backup: undefined }));
    assert.equal(missing.kind === 'waiting' && missing.reason, 'BackupNotFound');
    assert.match(JSON.stringify(missing), /VolumeBackup old, which does not exist in this namespace/);
    const pending = restoreState(volume, observed({ backup: backup('Pending') }));
    assert.equal(pending.kind === 'waiting' && pending.reason, 'WaitingForBackup');
  });

  it('fails for a failed backup, one without the volume, or a backup claim that is gone or not Bound', () => {
    assert.equal(restoreState(volume, observed({ backup: backup('Failed') })).kind, 'failed');
    const other = restoreState(
      volume,
      observed({ backup: backup('Completed', [{ name: 'logs', backupClaimName: 'x' }]) }),
    );
    assert.equal(other.kind === 'failed' && other.reason, 'BackupVolumeNotFound');
    const lost = restoreState(volume, observed({ backupClaim: () => undefined }));
    assert.equal(lost.kind === 'failed' && lost.reason, 'BackupClaimLost');
    const pending = restoreState(
      volume,
      observed({ backupClaim: () => ({ metadata: { name: 'old-data' }, status: { phase: 'Pending' } }) }),
    );
    assert.match(
      JSON.stringify(pending),
      /BackupClaimLost.*backup claim old-data of volume data is Pending, not Bound/,
    );
  });

  it("starts from the backup claim of a Completed VolumeBackup, expecting the volume's manifest", () => {
    assert.deepEqual(restoreState(volume, observed()), {
      kind: 'start',
      backupClaimName: 'old-data',
      manifest: MANIFEST,
    });
    assert.deepEqual(
      restoreState(
        volume,
        observed({ backup: backup('Completed', [{ name: 'data', backupClaimName: 'old-data' }]) }),
      ),
      { kind: 'start', backupClaimName: 'old-data' },
      'a backup from before copies were verified records none',
    );
  });

  it("follows the Job: copying, failed (terminal, with the copy pod's last words)", () => {
    assert.equal(restoreState(volume, observed({ claim, job })).kind, 'copying');
    const failedJob = finished(job, 'Failed', 'DeadlineExceeded');
    const failed = restoreState(volume, observed({ claim, job: failedJob }));
    assert.equal(failed.kind === 'failed' && failed.reason, 'RestoreFailed');
    assert.match(JSON.stringify(failed), /DeadlineExceeded/);
    const said = 'NotPermitted: /target/pgdata: chown to 999:999: operation not permitted';
    const withWords = restoreState(
      volume,
      observed({ claim, job: failedJob, jobPods: [copyPod(failedJob, 'p1', 1, said)] }),
    );
    assert.equal(withWords.kind === 'failed' && withWords.copyOutput, said);
    assert.match(
      withWords.kind === 'failed' ? withWords.message : '',
      /its copy pod said: NotPermitted: .*; delete the Job to try again$/,
    );
  });

  describe("a succeeded Job: its copy pod's report against the manifest the backup recorded", () => {
    const done = finished(job, 'Complete');
    it('equal: verified', () => {
      const pods = [copyPod(done, 'p1', 0, copyReport(MANIFEST, MANIFEST))];
      assert.deepEqual(restoreState(volume, observed({ claim, job: done, jobPods: pods })), {
        kind: 'verified',
        jobName: 'db-data-restore',
        manifest: MANIFEST,
        checked: true,
      });
    });

    it('different: RestoreVerificationFailed with expected and found', () => {
      const pods = [copyPod(done, 'p1', 0, copyReport(OTHER, OTHER))];
      const state = restoreState(volume, observed({ claim, job: done, jobPods: pods }));
      assert.equal(state.kind === 'failed' && state.reason, 'RestoreVerificationFailed');
      assert.match(
        state.kind === 'failed' ? state.message : '',
        /does not match the backup: expected 3 files, 4096 bytes, sha256:a{64}, found 2 files, 1024 bytes, sha256:b{64}; the StatefulSet is not created/,
      );
    });

    it('no report (no pod, or a message that is none): RestoreVerificationFailed', () => {
      for (const jobPods of [[], [copyPod(done, 'p1', 0)], [copyPod(done, 'p1', 0, 'copied')]]) {
        const state = restoreState(volume, observed({ claim, job: done, jobPods }));
        assert.equal(state.kind === 'failed' && state.reason, 'RestoreVerificationFailed');
      }
    });

    it('a backup without a manifest: the copy checked against its source is accepted, unchecked', () => {
      const old = backup('Completed', [{ name: 'data', backupClaimName: 'old-data' }]);
      const pods = [copyPod(done, 'p1', 0, copyReport(OTHER, OTHER))];
      assert.deepEqual(restoreState(volume, observed({ claim, job: done, jobPods: pods, backup: old })), {
        kind: 'verified',
        jobName: 'db-data-restore',
        manifest: OTHER,
        checked: false,
      });
    });
  });

  it('is done once the claim is marked, whatever became of the backup or the Job', () => {
    const marked = {
      metadata: { name: 'data-db-0', annotations: { [RESTORED_FROM_ANNOTATION]: 'old/data' } },
    };
    assert.deepEqual(restoreState(volume, observed({ claim: marked, backup: undefined })), {
      kind: 'restored',
    });
    const otherSource = { metadata: { annotations: { [RESTORED_FROM_ANNOTATION]: 'older/data' } } };
    assert.equal(restoreState(volume, observed({ claim: otherSource })).kind, 'start');
  });
});

describe('needsLivePods', () => {
  it('for a finished Job none of whose cached pods shows how its copy ended', () => {
    const done = finished(job, 'Complete');
    assert.equal(needsLivePods(job, []), false, 'still running');
    assert.equal(needsLivePods(done, []), true);
    assert.equal(needsLivePods(done, [copyPod(done, 'p1', 1, 'x')]), true, 'only a failed attempt');
    assert.equal(needsLivePods(done, [copyPod(done, 'p1', 0, 'x')]), false);
    assert.equal(needsLivePods(finished(job, 'Failed'), [copyPod(done, 'p1', 1)]), false);
  });
});
