import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { MachineVolume, VolumeBackup, VolumeManifest } from '../../../src/apis/index.ts';
import { jobOutcome } from '../../../src/apis/index.ts';
import {
  failureRecord,
  needsLiveRead,
  type RestoreObservation,
  restoreState,
} from '../../../src/controllers/podmachine/logic/restore.ts';
import {
  RESTORE_FAILURE_ANNOTATION,
  RESTORED_FROM_ANNOTATION,
} from '../../../src/controllers/podmachine/names.ts';

const volume: MachineVolume = {
  name: 'data',
  size: '1Gi',
  mountPath: '/data',
  restoreFrom: { volumeBackup: 'old-1234abcd', volume: 'data' },
};

const MANIFEST: VolumeManifest = { files: 3, bytes: 4096, digest: `sha256:${'a'.repeat(64)}` };
const OTHER: VolumeManifest = { files: 2, bytes: 4096, digest: `sha256:${'b'.repeat(64)}` };

type Phase = NonNullable<VolumeBackup['status']>['phase'];

/** `manifest` null: a backup recorded before copies were verified. */
function backup(phase: Phase, manifest: VolumeManifest | null = MANIFEST): VolumeBackup {
  return {
    apiVersion: 'infra.basicoperator.dev/v1alpha1',
    kind: 'VolumeBackup',
    metadata: { name: 'old-1234abcd', namespace: 'ns' },
    spec: { machineName: 'old', machineUID: 'u', volumes: [{ name: 'data', claimName: 'old-data' }] },
    status: {
      phase,
      volumes: [{ name: 'data', backupClaimName: 'old-1234abcd-data', ...(manifest ? { manifest } : {}) }],
    },
  };
}

const claim = (annotations?: Record<string, string>): V1PersistentVolumeClaim => ({
  metadata: { name: 'web-data', ...(annotations ? { annotations } : {}) },
});
const BOUND: V1PersistentVolumeClaim = {
  metadata: { name: 'old-1234abcd-data' },
  status: { phase: 'Bound' },
};

function job(condition?: { type: string; reason?: string; message?: string }): V1Job {
  return {
    metadata: { name: 'web-data-restore', uid: 'job-1' },
    status: condition ? { conditions: [{ ...condition, status: 'True' }] } : {},
  };
}
const SUCCEEDED = job({ type: 'Complete' });
const FAILED = job({
  type: 'Failed',
  reason: 'BackoffLimitExceeded',
  message: 'Job has reached the specified backoff limit',
});

const report = (source: VolumeManifest, target: VolumeManifest) =>
  JSON.stringify({ v: 1, source, target, copyMs: 12, manifestMs: 3 });

/** A pod of the restore Job whose copy container ended with `exitCode` and `message`. */
function copyPod(name: string, exitCode: number, message?: string, created = '2026-01-01T12:00:00Z'): V1Pod {
  return {
    metadata: { name, creationTimestamp: new Date(created) },
    status: {
      phase: exitCode === 0 ? 'Succeeded' : 'Failed',
      containerStatuses: [
        {
          name: 'copy',
          image: 'op',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode, ...(message !== undefined ? { message } : {}) } },
        },
      ],
    },
  };
}

function observed(overrides: Partial<RestoreObservation> = {}): RestoreObservation {
  return {
    claim: claim(),
    backup: backup('Completed'),
    job: undefined,
    jobPods: [],
    backupClaim: (name) => (name === 'old-1234abcd-data' ? BOUND : undefined),
    ...overrides,
  };
}

describe('restoreState', () => {
  it('has nothing to do for a volume without restoreFrom', () => {
    assert.deepEqual(restoreState({ ...volume, restoreFrom: undefined }, observed()), { kind: 'none' });
  });

  it('waits, saying so, while the VolumeBackup is missing or not Completed', () => {
    const missing = restoreState(volume, observed({ backup: undefined }));
    assert.equal(missing.kind === 'waiting' && missing.reason, 'BackupNotFound');
    const running = restoreState(volume, observed({ backup: backup('Running') }));
    assert.equal(running.kind === 'waiting' && running.reason, 'WaitingForBackup');
    assert.match(running.kind === 'waiting' ? running.message : '', /which is Running/);
  });

  it('fails for a Failed backup, a volume the backup does not have, or a backup claim that is gone', () => {
    const failed = restoreState(volume, observed({ backup: backup('Failed') }));
    assert.equal(failed.kind === 'failed' && failed.reason, 'BackupFailed');
    const other = restoreState(
      { ...volume, restoreFrom: { volumeBackup: 'old-1234abcd', volume: 'cache' } },
      observed(),
    );
    assert.equal(other.kind === 'failed' && other.reason, 'BackupVolumeNotFound');
    const lost = restoreState(volume, observed({ backupClaim: () => undefined }));
    assert.equal(lost.kind === 'failed' && lost.reason, 'BackupClaimLost');
    assert.match(
      lost.kind === 'failed' ? lost.message : '',
      /backup claim old-1234abcd-data of volume data does not exist/,
    );
  });

  it("starts a Job from the backup claim once the backup Completed, expecting the volume's manifest", () => {
    assert.deepEqual(restoreState(volume, observed()), {
      kind: 'start-job',
      backupClaimName: 'old-1234abcd-data',
      manifest: MANIFEST,
    });
    assert.deepEqual(restoreState(volume, observed({ backup: backup('Completed', null) })), {
      kind: 'start-job',
      backupClaimName: 'old-1234abcd-data',
    });
  });

  it('copying while the Job runs', () => {
    assert.equal(restoreState(volume, observed({ job: job() })).kind, 'restoring');
  });

  describe('a succeeded Job: verified against the manifest the backup recorded', () => {
    it("the copy pod's restored tree equals the backup's manifest: verified", () => {
      const pods = [copyPod('p1', 0, report(MANIFEST, MANIFEST))];
      assert.deepEqual(restoreState(volume, observed({ job: SUCCEEDED, jobPods: pods })), {
        kind: 'verified',
        manifest: MANIFEST,
        checked: true,
        backup: 'old-1234abcd',
      });
    });

    it('the newest succeeded pod reports, not an attempt that failed before it', () => {
      const pods = [
        copyPod('p2', 0, report(MANIFEST, MANIFEST), '2026-01-01T12:01:00Z'),
        copyPod('p1', 1, 'Io: EIO', '2026-01-01T12:00:00Z'),
      ];
      assert.equal(restoreState(volume, observed({ job: SUCCEEDED, jobPods: pods })).kind, 'verified');
    });

    it('a restored tree that differs: RestoreVerificationFailed, expected and found, to be recorded', () => {
      const pods = [copyPod('p1', 0, report(OTHER, OTHER))];
      const state = restoreState(volume, observed({ job: SUCCEEDED, jobPods: pods }));
      assert.equal(state.kind === 'failed' && state.reason, 'RestoreVerificationFailed');
      assert.equal(state.kind === 'failed' && state.unrecorded, 'job-1');
      assert.match(
        state.kind === 'failed' ? state.message : '',
        /restore Job web-data-restore succeeded, but the restored tree does not match the backup: expected 3 files, 4096 bytes, sha256:a{64}, found 2 files, 4096 bytes, sha256:b{64}; the pod is not started/,
      );
    });

    const unproven: { what: string; pods: V1Pod[]; says: RegExp }[] = [
      { what: 'no pod left', pods: [], says: /its copy pod is gone and left no report/ },
      {
        what: 'only a failed attempt',
        pods: [copyPod('p1', 1, 'x')],
        says: /its copy pod is gone and left no report/,
      },
      {
        what: 'no termination message',
        pods: [copyPod('p1', 0)],
        says: /report of its copy pod p1 cannot be read \(no termination message\)/,
      },
      {
        what: 'a message that is no report',
        pods: [copyPod('p1', 0, 'copied')],
        says: /report of its copy pod p1 cannot be read \("copied"\)/,
      },
      {
        what: 'a report of another version',
        pods: [copyPod('p1', 0, JSON.stringify({ v: 2, source: MANIFEST, target: MANIFEST }))],
        says: /cannot be read/,
      },
    ];
    for (const u of unproven) {
      it(`${u.what}: RestoreVerificationFailed, never the pod`, () => {
        const state = restoreState(volume, observed({ job: SUCCEEDED, jobPods: u.pods }));
        assert.equal(state.kind === 'failed' && state.reason, 'RestoreVerificationFailed');
        assert.match(state.kind === 'failed' ? state.message : '', u.says);
      });
    }

    it('a VolumeBackup gone before the check: nothing to check against, RestoreVerificationFailed', () => {
      const pods = [copyPod('p1', 0, report(MANIFEST, MANIFEST))];
      const state = restoreState(volume, observed({ job: SUCCEEDED, jobPods: pods, backup: undefined }));
      assert.equal(state.kind === 'failed' && state.reason, 'RestoreVerificationFailed');
      assert.match(
        state.kind === 'failed' ? state.message : '',
        /VolumeBackup old-1234abcd no longer exists/,
      );
    });

    it('a backup recorded before copies were verified: verified against its source only (checked: false)', () => {
      const old = backup('Completed', null);
      const pods = [copyPod('p1', 0, report(OTHER, OTHER))];
      assert.deepEqual(restoreState(volume, observed({ job: SUCCEEDED, jobPods: pods, backup: old })), {
        kind: 'verified',
        manifest: OTHER,
        checked: false,
        backup: 'old-1234abcd',
      });
      const differs = restoreState(
        volume,
        observed({ job: SUCCEEDED, jobPods: [copyPod('p1', 0, report(MANIFEST, OTHER))], backup: old }),
      );
      assert.equal(differs.kind === 'failed' && differs.reason, 'RestoreVerificationFailed');
    });
  });

  it("a failed Job: RestoreFailed with the copy pod's last words, to be recorded and told", () => {
    const said = 'walking /source\nMismatch: the restored tree differs from the backup manifest';
    const state = restoreState(volume, observed({ job: FAILED, jobPods: [copyPod('p1', 1, said)] }));
    assert.deepEqual(state, {
      kind: 'failed',
      reason: 'RestoreFailed',
      message: `volume data restores from VolumeBackup old-1234abcd: restore Job web-data-restore failed (BackoffLimitExceeded: Job has reached the specified backoff limit); its copy pod said: ${said}; delete the Job to try again`,
      unrecorded: 'job-1',
      copyOutput: said,
    });
  });

  it('long last words keep their end, in whole lines', () => {
    const said = `${'x'.repeat(3000)}\nline two\nthe reason`;
    const state = restoreState(volume, observed({ job: FAILED, jobPods: [copyPod('p1', 1, said)] }));
    assert.equal(state.kind === 'failed' && state.copyOutput, '...line two\nthe reason');
  });

  it('a failure recorded on the claim for this Job is what counts; one of another Job is stale', () => {
    const recorded = claim({
      [RESTORE_FAILURE_ANNOTATION]: failureRecord('job-1', {
        reason: 'RestoreVerificationFailed',
        message: 'mismatch',
      }),
    });
    assert.deepEqual(restoreState(volume, observed({ job: SUCCEEDED, claim: recorded })), {
      kind: 'failed',
      reason: 'RestoreVerificationFailed',
      message: 'mismatch',
    });
    const stale = claim({
      [RESTORE_FAILURE_ANNOTATION]: failureRecord('job-0', { reason: 'RestoreFailed', message: 'old' }),
    });
    const pods = [copyPod('p1', 0, report(MANIFEST, MANIFEST))];
    assert.equal(
      restoreState(volume, observed({ job: SUCCEEDED, claim: stale, jobPods: pods })).kind,
      'verified',
    );
  });

  it('is done for good once the claim is marked, even if the backup or Job are gone', () => {
    const marked = claim({ [RESTORED_FROM_ANNOTATION]: 'old-1234abcd/data' });
    assert.deepEqual(restoreState(volume, observed({ claim: marked, backup: undefined })), {
      kind: 'restored',
    });
    const otherSource = claim({ [RESTORED_FROM_ANNOTATION]: 'another/data' });
    assert.equal(restoreState(volume, observed({ claim: otherSource, backup: undefined })).kind, 'waiting');
  });
});

describe('needsLiveRead', () => {
  it('only for a finished Job whose outcome is neither recorded nor shown by a cached pod', () => {
    const ok = [copyPod('p1', 0, report(MANIFEST, MANIFEST))];
    assert.equal(needsLiveRead(volume, claim(), undefined, []), false, 'no Job');
    assert.equal(needsLiveRead(volume, claim(), job(), []), false, 'still running');
    assert.equal(needsLiveRead(volume, claim(), SUCCEEDED, ok), false, 'the cache shows the report');
    assert.equal(needsLiveRead(volume, claim(), SUCCEEDED, []), true, 'no pod cached');
    assert.equal(
      needsLiveRead(volume, claim(), SUCCEEDED, [copyPod('p1', 1)]),
      true,
      'only a failed attempt',
    );
    assert.equal(needsLiveRead(volume, claim(), FAILED, [copyPod('p1', 1)]), false);
    assert.equal(needsLiveRead(volume, claim(), FAILED, []), true);
    const recorded = claim({
      [RESTORE_FAILURE_ANNOTATION]: failureRecord('job-1', { reason: 'RestoreFailed', message: 'm' }),
    });
    assert.equal(needsLiveRead(volume, recorded, FAILED, []), false, 'recorded');
    const marked = claim({ [RESTORED_FROM_ANNOTATION]: 'old-1234abcd/data' });
    assert.equal(needsLiveRead(volume, marked, SUCCEEDED, []), false, 'restored');
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
