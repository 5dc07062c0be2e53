import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import {
  deadlineAt,
  deadlineMessage,
  describeJob,
  formatDuration,
  jobDeadlineSeconds,
  neverHadPods,
} from '../../../src/controllers/volumebackup/logic/deadline.ts';
import { computeStatus } from '../../../src/controllers/volumebackup/status.ts';
import { backup, manifest } from './fixtures.ts';

const T0 = Date.parse('2025-01-01T00:00:00Z');

describe('the VolumeBackup deadline', () => {
  it('runs from startTime (or now, before there is one)', () => {
    assert.equal(deadlineAt(backup({ startTime: '2025-01-01T00:00:00Z' }), 60_000, T0 + 5000), T0 + 60_000);
    assert.equal(deadlineAt(backup(), 60_000, T0 + 5000), T0 + 65_000);
  });

  it('gives each copy Job what is left of it plus the margin, in whole seconds, at least 1', () => {
    // The backup's deadline fires first; the Job's follows JOB_DEADLINE_MARGIN_MS (30 s) later.
    assert.equal(jobDeadlineSeconds(T0 + 59_500, T0), 90);
    assert.equal(jobDeadlineSeconds(T0, T0 + 10_000), 20);
    assert.equal(jobDeadlineSeconds(T0, T0 + 60_000), 1);
  });

  it('formats durations briefly', () => {
    assert.deepEqual([3_600_000, 90_000, 20_000, 0].map(formatDuration), ['1h', '1m30s', '20s', '0s']);
  });

  it('fails the backup with DeadlineExceeded and where each volume stood', () => {
    const message = deadlineMessage(
      20_000,
      [
        { volume: 'data', state: 'copying', attempt: 1, job: 'j-data-1' },
        { volume: 'logs', state: 'copied', manifest: manifest() },
      ],
      (v) => (v === 'data' ? 'copy Job j-data-1 could not create its pod: forbidden' : undefined),
    );
    assert.equal(
      message,
      'not completed within the deadline of 20s (--volume-copy-deadline): volume data: copy Job j-data-1 could not create its pod: forbidden',
    );
    const status = computeStatus(
      backup({ phase: 'Running', startTime: '2025-01-01T00:00:00Z' }),
      {
        progress: [{ volume: 'data', state: 'copying', attempt: 1, job: 'j-data-1' }],
        jobCount: 1,
        skipped: false,
        deadlineExceeded: message,
      },
      new Date(T0 + 20_000),
    );
    assert.equal(status.phase, 'Failed');
    const ready = status.conditions?.find((c) => c.type === 'Ready');
    assert.deepEqual([ready?.status, ready?.reason, ready?.message], ['False', 'DeadlineExceeded', message]);
    assert.equal(status.completionTime, '2025-01-01T00:00:20Z');
  });

  it('completes rather than fails when every volume was copied just in time', () => {
    const status = computeStatus(
      backup({ phase: 'Running' }),
      {
        progress: [{ volume: 'data', state: 'copied', manifest: manifest() }],
        jobCount: 1,
        skipped: false,
        deadlineExceeded: 'late',
      },
      new Date(T0),
    );
    assert.equal(status.phase, 'Completed');
  });
});

describe('describeJob', () => {
  const job: V1Job = { metadata: { name: 'j' }, status: {} };
  it('quotes the refusal for a Job that never had a pod', () => {
    assert.equal(neverHadPods(job, []), true);
    assert.equal(
      describeJob(job, [], 'pods "j-x" is forbidden'),
      'copy Job j could not create its pod: pods "j-x" is forbidden',
    );
    assert.equal(neverHadPods({ ...job, status: { failed: 1 } }, []), false);
  });

  it('quotes the scheduler for a pod that is not scheduled', () => {
    const pod: V1Pod = {
      metadata: { name: 'j-x' },
      status: {
        phase: 'Pending',
        conditions: [
          { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: 'unbound claims' },
        ],
      },
    };
    assert.equal(
      describeJob(job, [pod], undefined),
      'copy pod j-x is Pending, not scheduled: unbound claims',
    );
  });
});
