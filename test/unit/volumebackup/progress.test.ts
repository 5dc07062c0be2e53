import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  COPY_FAILURE_ANNOTATION,
  COPY_REPORT_ANNOTATION,
} from '../../../src/controllers/volumebackup/names.ts';
import {
  attemptsByVolume,
  type BackupFacts,
  computeBackupStatus,
  copyAttempt,
  copyRecorded,
  exponentialRetry,
  volumeProgress,
} from '../../../src/controllers/volumebackup/progress.ts';
import { backup, copyJob, copyReport, manifest, REPORTED } from './fixtures.ts';

const POLICY = exponentialRetry(3, 10_000);
const T0 = Date.parse('2025-01-01T00:00:00Z');
const NOW = new Date('2025-01-01T00:05:00Z');

describe('exponentialRetry', () => {
  it('doubles the pause after each failure, up to 5 minutes', () => {
    assert.deepEqual([1, 2, 3, 10].map(POLICY.backoffMs), [10_000, 20_000, 40_000, 300_000]);
  });
});

describe('copyAttempt and attemptsByVolume', () => {
  it('reads attempt, outcome and failure time from each Job, grouped by volume in order', () => {
    const jobs = [
      copyJob('data', 2),
      copyJob('data', 1, { type: 'Failed', reason: 'BackoffLimitExceeded', message: 'Job has failed' }),
      copyJob('logs', 1, { type: 'Complete' }, REPORTED),
    ];
    const byVolume = attemptsByVolume(jobs);
    assert.deepEqual(byVolume.get('data'), [
      {
        attempt: 1,
        name: 'web-0b7c9a52-data-1',
        outcome: 'failed',
        message: 'BackoffLimitExceeded: Job has failed',
        failedAt: T0,
      },
      { attempt: 2, name: 'web-0b7c9a52-data-2', outcome: 'running' },
    ]);
    assert.deepEqual(byVolume.get('logs'), [
      { attempt: 1, name: 'web-0b7c9a52-logs-1', outcome: 'succeeded', manifest: manifest() },
    ]);
  });

  it('a completed Job is finishing, not succeeded, until the report of its pod is recorded on it', () => {
    const done = copyJob('data', 1, { type: 'Complete' });
    assert.equal(copyRecorded(done), false);
    assert.deepEqual(copyAttempt(done), { attempt: 1, name: 'web-0b7c9a52-data-1', outcome: 'finishing' });
    const recorded = copyJob('data', 1, { type: 'Complete' }, REPORTED);
    assert.equal(copyRecorded(recorded), true);
    assert.equal(copyAttempt(recorded)?.outcome, 'succeeded');
  });

  it('a completed Job whose recorded report shows a copy unlike its source failed', () => {
    const unequal = copyJob(
      'data',
      1,
      { type: 'Complete' },
      { [COPY_REPORT_ANNOTATION]: copyReport(manifest(1), manifest(2)) },
    );
    assert.deepEqual(copyAttempt(unequal), {
      attempt: 1,
      name: 'web-0b7c9a52-data-1',
      outcome: 'failed',
      message: 'the recorded copy report does not prove an equal copy',
    });
    const garbled = copyJob(
      'data',
      1,
      { type: 'Complete' },
      { [COPY_REPORT_ANNOTATION]: 'copied, trust me' },
    );
    assert.equal(copyAttempt(garbled)?.outcome, 'failed');
  });

  it('a Job with a recorded failure failed, with why', () => {
    const completed = copyJob(
      'data',
      1,
      { type: 'Complete' },
      { [COPY_FAILURE_ANNOTATION]: 'the copy pod left no message' },
    );
    assert.deepEqual(copyAttempt(completed), {
      attempt: 1,
      name: 'web-0b7c9a52-data-1',
      outcome: 'failed',
      message: 'the copy pod left no message',
    });
    const failed = copyJob(
      'data',
      1,
      { type: 'Failed', reason: 'BackoffLimitExceeded', message: 'Job has failed' },
      { [COPY_FAILURE_ANNOTATION]: 'OwnerNotPreserved: /source/pg is owned by 999' },
    );
    assert.equal(
      copyAttempt(failed)?.message,
      'BackoffLimitExceeded: Job has failed: OwnerNotPreserved: /source/pg is owned by 999',
      "the Job's reason, then the pod's words",
    );
  });

  it('ignores a Job without a usable attempt label', () => {
    const job = copyJob('data', 1);
    job.metadata!.labels!['infra.basicoperator.dev/attempt'] = 'one';
    assert.equal(copyAttempt(job), undefined);
  });
});

describe('volumeProgress', () => {
  const failed = (attempt: number, at = T0) => ({
    attempt,
    name: `j${attempt}`,
    outcome: 'failed' as const,
    failedAt: at,
    message: 'Error',
  });

  it('starts attempt 1 when there is no Job yet', () => {
    assert.deepEqual(volumeProgress('data', [], POLICY, T0), { volume: 'data', state: 'start', attempt: 1 });
  });

  it('is copying while the latest Job runs or finishes, and copied, with its manifest, once any Job succeeded', () => {
    assert.equal(
      volumeProgress('data', [{ attempt: 1, name: 'j1', outcome: 'running' }], POLICY, T0).state,
      'copying',
    );
    assert.deepEqual(volumeProgress('data', [{ attempt: 1, name: 'j1', outcome: 'finishing' }], POLICY, T0), {
      volume: 'data',
      state: 'copying',
      attempt: 1,
      job: 'j1',
    });
    assert.deepEqual(
      volumeProgress(
        'data',
        [failed(1), { attempt: 2, name: 'j2', outcome: 'succeeded', manifest: manifest() }],
        POLICY,
        T0,
      ),
      { volume: 'data', state: 'copied', manifest: manifest() },
    );
  });

  it('waits out the backoff after a failure, then starts the next attempt', () => {
    const early = volumeProgress('data', [failed(1)], POLICY, T0 + 4_000);
    assert.deepEqual(early, {
      volume: 'data',
      state: 'waiting-to-retry',
      attempt: 2,
      dueInMs: 6_000,
      lastFailure: 'copy Job j1 failed: Error',
    });
    const due = volumeProgress('data', [failed(1)], POLICY, T0 + 10_000);
    assert.equal(due.state === 'start' && due.attempt, 2);
    const second = volumeProgress('data', [failed(1), failed(2, T0 + 15_000)], POLICY, T0 + 20_000);
    assert.equal(
      second.state === 'waiting-to-retry' && second.dueInMs,
      15_000,
      '20 s after the second failure',
    );
  });

  it('fails after the last attempt failed, naming the count and the last failure', () => {
    const p = volumeProgress('data', [failed(1), failed(2), failed(3)], POLICY, T0 + 1e9);
    assert.equal(p.state, 'failed');
    assert.equal(
      p.state === 'failed' && p.message,
      'volume data: 3 of 3 copy attempts failed; last: copy Job j3 failed: Error',
    );
  });
});

describe('computeBackupStatus', () => {
  const facts = (overrides: Partial<BackupFacts>): BackupFacts => ({
    progress: [],
    jobCount: 0,
    skipped: false,
    generation: 1,
    ...overrides,
  });

  it('is Pending before any Job, with the backup claims named', () => {
    const status = computeBackupStatus(
      backup(),
      facts({
        progress: [
          { volume: 'data', state: 'start', attempt: 1 },
          { volume: 'logs', state: 'start', attempt: 1 },
        ],
      }),
      NOW,
    );
    assert.equal(status.phase, 'Pending');
    assert.equal(status.startTime, '2025-01-01T00:05:00Z');
    assert.equal(status.completionTime, undefined);
    assert.deepEqual(status.volumes, [
      { name: 'data', backupClaimName: 'web-0b7c9a52-data' },
      { name: 'logs', backupClaimName: 'web-0b7c9a52-logs' },
    ]);
    assert.equal(status.conditions?.[0]?.reason, 'BackupPending');
  });

  it('is Running with progress and retries in the Ready message', () => {
    const status = computeBackupStatus(
      backup(),
      facts({
        jobCount: 2,
        progress: [
          { volume: 'data', state: 'copied', manifest: manifest() },
          {
            volume: 'logs',
            state: 'waiting-to-retry',
            attempt: 2,
            dueInMs: 9_500,
            lastFailure: 'copy Job x failed: E',
          },
        ],
      }),
      NOW,
    );
    assert.equal(status.phase, 'Running');
    assert.equal(status.attempts, 2);
    assert.deepEqual(status.conditions?.[0], {
      type: 'Ready',
      status: 'False',
      reason: 'BackupInProgress',
      message: 'copied 1 of 2 volumes; volume logs: copy Job x failed: E; retrying in 10s',
      observedGeneration: 1,
      lastTransitionTime: '2025-01-01T00:05:00Z',
    });
  });

  it('names the Jobs still copying', () => {
    const status = computeBackupStatus(
      backup(),
      facts({
        jobCount: 1,
        progress: [
          { volume: 'data', state: 'copying', attempt: 1, job: 'web-0b7c9a52-data-1' },
          { volume: 'logs', state: 'copied', manifest: manifest(2) },
        ],
      }),
      NOW,
    );
    assert.equal(
      status.conditions?.[0]?.message,
      'copied 1 of 2 volumes; copying data (Job web-0b7c9a52-data-1)',
    );
  });

  it('is Completed once every volume is copied, with a completion time', () => {
    const status = computeBackupStatus(
      backup({ phase: 'Running', startTime: '2025-01-01T00:00:00Z', attempts: 2 }),
      facts({
        jobCount: 2,
        progress: [
          { volume: 'data', state: 'copied', manifest: manifest() },
          { volume: 'logs', state: 'copied', manifest: manifest(2) },
        ],
      }),
      NOW,
    );
    assert.equal(status.phase, 'Completed');
    assert.equal(status.startTime, '2025-01-01T00:00:00Z');
    assert.equal(status.completionTime, '2025-01-01T00:05:00Z');
    assert.equal(status.conditions?.[0]?.status, 'True');
    assert.equal(status.conditions?.[0]?.message, 'all 2 volumes copied and verified');
    assert.deepEqual(status.volumes, [
      { name: 'data', backupClaimName: 'web-0b7c9a52-data', manifest: manifest() },
      { name: 'logs', backupClaimName: 'web-0b7c9a52-logs', manifest: manifest(2) },
    ]);
  });

  it('keeps the manifest of a volume copied earlier', () => {
    const status = computeBackupStatus(
      backup({
        phase: 'Running',
        volumes: [{ name: 'data', backupClaimName: 'web-0b7c9a52-data', manifest: manifest() }],
      }),
      facts({ jobCount: 2, progress: [{ volume: 'logs', state: 'copying', attempt: 1, job: 'j' }] }),
      NOW,
    );
    assert.deepEqual(status.volumes?.[0]?.manifest, manifest());
    assert.equal(status.volumes?.[1]?.manifest, undefined);
  });

  it('is Failed with every failure in the message', () => {
    const status = computeBackupStatus(
      backup(),
      facts({
        jobCount: 6,
        progress: [
          { volume: 'data', state: 'failed', message: 'volume data: 3 of 3 copy attempts failed' },
          { volume: 'logs', state: 'copied', manifest: manifest(2) },
        ],
      }),
      NOW,
    );
    assert.equal(status.phase, 'Failed');
    assert.equal(status.conditions?.[0]?.reason, 'BackupFailed');
    assert.equal(status.conditions?.[0]?.message, 'volume data: 3 of 3 copy attempts failed');
  });

  it("reports observedGeneration, and Stalled with Ready's reason once Failed", () => {
    const stalled = (status: ReturnType<typeof computeBackupStatus>) =>
      status.conditions?.find((c) => c.type === 'Stalled');
    const running = computeBackupStatus(
      backup(),
      facts({ jobCount: 1, progress: [{ volume: 'data', state: 'copying', attempt: 1, job: 'j' }] }),
      NOW,
    );
    assert.equal(running.observedGeneration, 1);
    assert.equal(stalled(running), undefined);
    const attemptsUsedUp = computeBackupStatus(
      backup(),
      facts({
        jobCount: 3,
        progress: [{ volume: 'data', state: 'failed', message: 'volume data: 3 of 3 copy attempts failed' }],
      }),
      NOW,
    );
    assert.deepEqual(stalled(attemptsUsedUp), {
      type: 'Stalled',
      status: 'True',
      reason: 'BackupFailed',
      message: 'volume data: 3 of 3 copy attempts failed',
      observedGeneration: 1,
      lastTransitionTime: '2025-01-01T00:05:00Z',
    });
    const outOfTime = computeBackupStatus(
      backup(),
      facts({
        jobCount: 1,
        deadlineExceeded: 'not done after 1h',
        progress: [{ volume: 'data', state: 'copying', attempt: 1, job: 'j' }],
      }),
      NOW,
    );
    assert.equal(stalled(outOfTime)?.reason, 'DeadlineExceeded');
    const completed = computeBackupStatus(
      backup(),
      facts({ progress: [{ volume: 'data', state: 'copied', manifest: manifest() }] }),
      NOW,
    );
    assert.equal(stalled(completed), undefined);
  });

  it('never reopens Completed or Failed, and never lowers attempts', () => {
    const done = backup({
      phase: 'Completed',
      attempts: 4,
      completionTime: '2025-01-01T00:01:00Z',
      conditions: [],
    });
    const status = computeBackupStatus(
      done,
      facts({ jobCount: 2, progress: [{ volume: 'data', state: 'copying', attempt: 3, job: 'j3' }] }),
      NOW,
    );
    assert.equal(status.phase, 'Completed');
    assert.equal(status.attempts, 4);
    assert.equal(status.completionTime, '2025-01-01T00:01:00Z');
  });

  it('records a skip: a running backup becomes Failed, a Failed one keeps its reason', () => {
    const running = computeBackupStatus(
      backup({ phase: 'Running' }),
      facts({
        skipped: true,
        jobCount: 1,
        progress: [{ volume: 'data', state: 'copying', attempt: 1, job: 'j1' }],
      }),
      NOW,
    );
    assert.equal(running.phase, 'Failed');
    assert.equal(running.conditions?.find((c) => c.type === 'Ready')?.reason, 'BackupSkipped');
    assert.equal(running.conditions?.find((c) => c.type === 'Skipped')?.status, 'True');

    const failedReady = {
      type: 'Ready',
      status: 'False' as const,
      reason: 'BackupFailed',
      message: 'boom',
      lastTransitionTime: '2025-01-01T00:00:00Z',
    };
    const failed = computeBackupStatus(
      backup({ phase: 'Failed', conditions: [failedReady] }),
      facts({ skipped: true, progress: [{ volume: 'data', state: 'failed', message: 'boom' }] }),
      NOW,
    );
    assert.equal(failed.phase, 'Failed');
    assert.deepEqual(failed.conditions?.[0], failedReady);
    assert.match(
      failed.conditions?.[1]?.message ?? '',
      /Machine web was deleted without waiting for this backup/,
    );
  });

  it('does not call a backup that completed anyway skipped', () => {
    const status = computeBackupStatus(
      backup({ phase: 'Running' }),
      facts({
        skipped: true,
        jobCount: 2,
        progress: [{ volume: 'data', state: 'copied', manifest: manifest() }],
      }),
      NOW,
    );
    assert.equal(status.phase, 'Completed');
    assert.equal(
      status.conditions?.find((c) => c.type === 'Skipped'),
      undefined,
    );
  });
});
