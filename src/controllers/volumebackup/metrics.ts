import { Gauge, type Registry } from 'prom-client';
import { VOLUME_BACKUP_PHASES, type VolumeBackup, type VolumeBackupPhase } from '../../apis/index.ts';
import { toMillis } from '../../runtime/time.ts';

/** What the backup alerts read: how many VolumeBackups are in each phase, and the oldest unfinished one's age. */
export interface VolumeBackupCensus {
  byPhase: Record<VolumeBackupPhase, number>;
  /** Seconds since the oldest Pending or Running VolumeBackup started (or was created); 0 when none. */
  oldestUnfinishedSeconds: number;
}

export function volumeBackupCensus(backups: readonly VolumeBackup[], nowMs: number): VolumeBackupCensus {
  const byPhase = Object.fromEntries(VOLUME_BACKUP_PHASES.map((phase) => [phase, 0])) as Record<
    VolumeBackupPhase,
    number
  >;
  let oldestMs: number | undefined;
  for (const backup of backups) {
    // A VolumeBackup its controller has not reconciled yet has no phase: it is waiting, as Pending is.
    const phase = backup.status?.phase ?? 'Pending';
    byPhase[phase] += 1;
    if (phase === 'Completed' || phase === 'Failed') continue;
    const since = toMillis(backup.status?.startTime) ?? toMillis(backup.metadata.creationTimestamp);
    if (since !== undefined && (oldestMs === undefined || since < oldestMs)) oldestMs = since;
  }
  const oldestUnfinishedSeconds = oldestMs === undefined ? 0 : Math.max(0, (nowMs - oldestMs) / 1000);
  return { byPhase, oldestUnfinishedSeconds };
}

/**
 * Gauges computed from the informer cache when Prometheus scrapes (no timer, one pass over the
 * cached VolumeBackups each). Their only label is the phase, a fixed set: object names would make a
 * series per backup, and a `namespace` label would clash with the target's own `namespace` label
 * (Prometheus renames it to exported_namespace) and grow with tenants; the runbooks find the
 * objects with kubectl instead. Every replica reports them (standbys keep their caches warm).
 */
export function registerVolumeBackupMetrics(
  registry: Registry,
  backups: () => readonly VolumeBackup[],
  now: () => number = Date.now,
): void {
  // Each gauge takes its own census: one pass over the cache each, cheaper than keeping them in step.
  const take = (): VolumeBackupCensus => volumeBackupCensus(backups(), now());
  new Gauge({
    name: 'basic_operator_volumebackups',
    help: 'Number of VolumeBackups in each phase (Pending includes those not reconciled yet).',
    labelNames: ['phase'],
    registers: [registry],
    collect() {
      for (const [phase, count] of Object.entries(take().byPhase)) this.set({ phase }, count);
    },
  });
  new Gauge({
    name: 'basic_operator_volumebackup_oldest_unfinished_seconds',
    help: 'Seconds since the oldest Pending or Running VolumeBackup started (or was created); 0 when there is none.',
    registers: [registry],
    collect() {
      this.set(take().oldestUnfinishedSeconds);
    },
  });
}
