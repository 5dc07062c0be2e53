import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type BackupFacts, computeStatus } from '../../../src/controllers/volumebackup/status.ts';
import { backup, manifest } from './fixtures.ts';

const NOW = new Date('2025-01-01T00:05:00Z');

describe('computeStatus', () => {
  const facts = (overrides: Partial<BackupFacts>): BackupFacts => ({
    progress: [],
    jobCount: 0,
    skipped: false,
    generation: 1,
    ...overrides,
  });

  it('is Pending before any Job, with the backup claims named', () => {
    const status = computeStatus(
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
    const status = computeStatus(
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
    const status = computeStatus(
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
    const status = computeStatus(
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
    const status = computeStatus(
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
    const status = computeStatus(
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
    const stalled = (status: ReturnType<typeof computeStatus>) =>
      status.conditions?.find((c) => c.type === 'Stalled');
    const running = computeStatus(
      backup(),
      facts({ jobCount: 1, progress: [{ volume: 'data', state: 'copying', attempt: 1, job: 'j' }] }),
      NOW,
    );
    assert.equal(running.observedGeneration, 1);
    assert.equal(stalled(running), undefined);
    const attemptsUsedUp = computeStatus(
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
    const outOfTime = computeStatus(
      backup(),
      facts({
        jobCount: 1,
        deadlineExceeded: 'not done after 1h',
        progress: [{ volume: 'data', state: 'copying', attempt: 1, job: 'j' }],
      }),
      NOW,
    );
    assert.equal(stalled(outOfTime)?.reason, 'DeadlineExceeded');
    const completed = computeStatus(
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
    const status = computeStatus(
      done,
      facts({ jobCount: 2, progress: [{ volume: 'data', state: 'copying', attempt: 3, job: 'j3' }] }),
      NOW,
    );
    assert.equal(status.phase, 'Completed');
    assert.equal(status.attempts, 4);
    assert.equal(status.completionTime, '2025-01-01T00:01:00Z');
  });

  it('records a skip: a running backup becomes Failed, a Failed one keeps its reason', () => {
    const running = computeStatus(
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
    const failed = computeStatus(
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
    const status = computeStatus(
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
