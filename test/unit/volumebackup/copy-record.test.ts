import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { KWOK_COPY_REPORT } from '../../../e2e/providers/local/kwok-stages.ts';
import { parseCopyReport } from '../../../src/apis/index.ts';
import {
  copyRecord,
  describeReport,
  POD_END_GRACE_MS,
} from '../../../src/controllers/volumebackup/logic/copy-record.ts';
import {
  COPY_FAILURE_ANNOTATION,
  COPY_REPORT_ANNOTATION,
} from '../../../src/controllers/volumebackup/names.ts';
import { copyJob, copyReport, manifest } from './fixtures.ts';

const T0 = Date.parse('2025-01-01T00:00:00Z');

/** A copy Job that ended at T0: Complete (with its completion time) or Failed. */
function ended(type: 'Complete' | 'Failed', annotations?: Record<string, string>): V1Job {
  const job = copyJob(
    'data',
    1,
    type === 'Failed'
      ? { type, reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }
      : { type },
    annotations,
  );
  if (type === 'Complete') job.status!.completionTime = '2025-01-01T00:00:00Z' as unknown as Date;
  return job;
}

/** The Job's pod: its copy container ended with `message` (exit code 0, or 1 when `failed`), or still runs. */
function pod(end?: { message?: string; failed?: boolean }): V1Pod {
  return {
    metadata: { name: 'web-0b7c9a52-data-1-abcde', namespace: 'ns' },
    status: {
      phase: end ? (end.failed ? 'Failed' : 'Succeeded') : 'Running',
      containerStatuses: [
        {
          name: 'copy',
          image: 'operator:1',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: end
            ? {
                terminated: {
                  exitCode: end.failed ? 1 : 0,
                  ...(end.message !== undefined ? { message: end.message } : {}),
                },
              }
            : { running: {} },
        },
      ],
    },
  };
}

describe('copyRecord', () => {
  it('a succeeded Job whose pod reports equal manifests: the report, to record as it is', () => {
    const record = copyRecord(ended('Complete'), [pod({ message: copyReport() })], T0);
    assert.equal(record?.kind, 'report');
    if (record?.kind !== 'report') return;
    assert.deepEqual(record.report, {
      source: manifest(),
      target: manifest(),
      copyMs: 2000,
      manifestMs: 500,
    });
    assert.deepEqual(parseCopyReport(record.value), record.report, 'what is recorded reads back the same');
  });

  it('a succeeded Job whose pod reports unequal manifests: a failure naming both', () => {
    const record = copyRecord(
      ended('Complete'),
      [pod({ message: copyReport(manifest(1), manifest(2)) })],
      T0,
    );
    assert.deepEqual(record, {
      kind: 'failure',
      message: `the copy differs from its source: source 3 files, 4096 bytes, ${manifest(1).digest}; copy 6 files, 8192 bytes, ${manifest(2).digest}`,
    });
  });

  it('a succeeded Job whose pod left no message, or no report: a failure, not a copy', () => {
    assert.deepEqual(copyRecord(ended('Complete'), [pod({})], T0), {
      kind: 'failure',
      message: 'the copy pod reported no manifest: the copy is not proven',
    });
    assert.deepEqual(copyRecord(ended('Complete'), [pod({ message: '' })], T0), {
      kind: 'failure',
      message: 'the copy pod reported no manifest: the copy is not proven',
    });
    const said = 'cp: done\n';
    assert.deepEqual(copyRecord(ended('Complete'), [pod({ message: said })], T0), {
      kind: 'failure',
      message: 'the copy pod reported no manifest: cp: done: the copy is not proven',
      podMessage: 'cp: done',
    });
  });

  it("a pod whose end the cache does not show yet: wait, at most POD_END_GRACE_MS from the Job's end", () => {
    assert.deepEqual(copyRecord(ended('Complete'), [pod()], T0), { kind: 'wait', retryInMs: 2000 });
    assert.deepEqual(copyRecord(ended('Complete'), [pod()], T0 + POD_END_GRACE_MS - 500), {
      kind: 'wait',
      retryInMs: 500,
    });
    assert.deepEqual(copyRecord(ended('Complete'), [pod()], T0 + POD_END_GRACE_MS), {
      kind: 'failure',
      message: 'the copy pod did not report how it ended within 60s: the copy is not proven',
    });
    // A failed Job: from its Failed condition's time.
    assert.equal(copyRecord(ended('Failed'), [pod()], T0 + 1000)?.kind, 'wait');
    assert.equal(copyRecord(ended('Failed'), [pod()], T0 + POD_END_GRACE_MS)?.kind, 'failure');
  });

  it('a finished Job whose pod is gone: a failure at once', () => {
    for (const type of ['Complete', 'Failed'] as const) {
      assert.deepEqual(copyRecord(ended(type), [], T0), {
        kind: 'failure',
        message: 'the copy pod was gone before its report was read: the copy is not proven',
      });
    }
  });

  it("a failed Job: the pod's words (its last log lines), cut to their tail", () => {
    const words = 'OwnerNotPreserved: /source/pgdata is owned by 999:999 and the copy runs as 65532';
    assert.deepEqual(copyRecord(ended('Failed'), [pod({ failed: true, message: `${words}\n` })], T0), {
      kind: 'failure',
      message: words,
      podMessage: words,
    });
    const log = Array.from({ length: 200 }, (_, i) => `copying file ${i}`).join('\n');
    const record = copyRecord(
      ended('Failed'),
      [pod({ failed: true, message: `${log}\nNo space left on device` })],
      T0,
    );
    assert.equal(record?.kind, 'failure');
    if (record?.kind !== 'failure') return;
    assert.ok(record.message.startsWith('...'), 'cut at its start');
    assert.ok(record.message.endsWith('copying file 199\nNo space left on device'), 'the last lines kept');
    assert.equal(record.message.length, 3 + 1024);
    assert.equal(record.podMessage, record.message);
    assert.deepEqual(copyRecord(ended('Failed'), [pod({ failed: true })], T0), {
      kind: 'failure',
      message: 'the copy pod left no message',
    });
  });

  it("kwok's stand-in for the mover (the local cluster's copy pods) reports a verified copy", () => {
    const record = copyRecord(ended('Complete'), [pod({ message: KWOK_COPY_REPORT })], T0);
    assert.equal(record?.kind, 'report');
  });

  it('nothing to record for a Job still running, or one whose record is there', () => {
    assert.equal(copyRecord(copyJob('data', 1), [pod()], T0), undefined);
    assert.equal(
      copyRecord(
        ended('Complete', { [COPY_REPORT_ANNOTATION]: copyReport() }),
        [pod({ message: copyReport() })],
        T0,
      ),
      undefined,
    );
    assert.equal(copyRecord(ended('Failed', { [COPY_FAILURE_ANNOTATION]: 'x' }), [], T0), undefined);
  });
});

describe('describeReport', () => {
  it('says what was copied and verified, with the throughput where the pod timed it', () => {
    const target = { ...manifest(), bytes: 10_000_000 };
    assert.equal(
      describeReport('data', { source: target, target, copyMs: 2000, manifestMs: 500 }),
      `volume data: 3 files, 10000000 bytes, ${target.digest} copied and verified; copied in 2.0s (5.0 MB/s), manifests 0.5s`,
    );
    assert.equal(
      describeReport('data', { source: target, target }),
      `volume data: 3 files, 10000000 bytes, ${target.digest} copied and verified`,
    );
  });
});
