import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  attemptsByVolume,
  copyAttempt,
  copyRecorded,
  exponentialRetry,
  volumeProgress,
} from '../../../src/controllers/volumebackup/logic/progress.ts';
import {
  COPY_FAILURE_ANNOTATION,
  COPY_REPORT_ANNOTATION,
} from '../../../src/controllers/volumebackup/names.ts';
import { copyJob, copyReport, manifest, REPORTED } from './fixtures.ts';

const POLICY = exponentialRetry(3, 10_000);
const T0 = Date.parse('2025-01-01T00:00:00Z');

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
