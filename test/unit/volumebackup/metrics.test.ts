import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import type { VolumeBackup, VolumeBackupStatus } from '../../../src/apis/index.ts';
import {
  registerVolumeBackupMetrics,
  volumeBackupCensus,
} from '../../../src/controllers/volumebackup/metrics.ts';
import { backup } from './fixtures.ts';

const NOW = Date.parse('2026-11-24T12:00:00Z');

function made(at: string, status?: VolumeBackupStatus): VolumeBackup {
  const b = backup(status);
  return { ...b, metadata: { ...b.metadata, creationTimestamp: new Date(at) } };
}

describe('VolumeBackup census', () => {
  it('counts each phase (no phase yet counts as Pending) and times the oldest unfinished backup', () => {
    const census = volumeBackupCensus(
      [
        made('2026-11-24T11:59:00Z'),
        made('2026-11-24T09:00:00Z', { phase: 'Running', startTime: '2026-11-24T11:00:00Z' }),
        made('2026-11-24T11:30:00Z', { phase: 'Pending' }),
        made('2026-11-24T01:00:00Z', { phase: 'Completed', startTime: '2026-11-24T01:00:00Z' }),
        made('2026-11-24T02:00:00Z', { phase: 'Failed', startTime: '2026-11-24T02:00:00Z' }),
      ],
      NOW,
    );
    assert.deepEqual(census.byPhase, { Pending: 2, Running: 1, Completed: 1, Failed: 1 });
    // The Running one started an hour ago (its startTime, not its older creation, counts).
    assert.equal(census.oldestUnfinishedSeconds, 3600);
  });

  it('reports 0 seconds when nothing is unfinished', () => {
    const census = volumeBackupCensus([made('2026-11-24T01:00:00Z', { phase: 'Completed' })], NOW);
    assert.equal(census.oldestUnfinishedSeconds, 0);
    assert.deepEqual(volumeBackupCensus([], NOW).byPhase, {
      Pending: 0,
      Running: 0,
      Completed: 0,
      Failed: 0,
    });
  });
});

describe('VolumeBackup gauges', () => {
  it('are computed from the cache at each scrape', async () => {
    const registry = new Registry();
    let cached: VolumeBackup[] = [];
    registerVolumeBackupMetrics(
      registry,
      () => cached,
      () => NOW,
    );
    const empty = await registry.metrics();
    assert.match(empty, /^basic_operator_volumebackups\{phase="Failed"\} 0$/m);
    assert.match(empty, /^basic_operator_volumebackup_oldest_unfinished_seconds 0$/m);

    cached = [
      made('2026-11-24T11:00:00Z', { phase: 'Failed' }),
      made('2026-11-24T11:50:00Z', { phase: 'Running', startTime: '2026-11-24T11:50:00Z' }),
    ];
    const text = await registry.metrics();
    assert.match(text, /^basic_operator_volumebackups\{phase="Failed"\} 1$/m);
    assert.match(text, /^basic_operator_volumebackups\{phase="Running"\} 1$/m);
    assert.match(text, /^basic_operator_volumebackups\{phase="Pending"\} 0$/m);
    assert.match(text, /^basic_operator_volumebackup_oldest_unfinished_seconds 600$/m);
  });
});
