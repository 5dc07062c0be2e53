// reconcile() of the machine-backup controller (the VolumeBackup controller's half on Machines)
// against a fake API server and real informers filled from it: the finalizer it adds and removes, the
// VolumeBackup it records, and the one condition of the Machine's status it hands over.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MACHINE,
  type Machine,
  SKIP_BACKUP_ANNOTATION,
  VOLUME_BACKUP,
  VOLUME_BACKUP_FINALIZER,
  type VolumeBackup,
} from '../../../src/apis/index.ts';
import { MACHINE_BACKUP_CONTROLLER } from '../../../src/controllers/volumebackup/index.ts';
import { MachineBackupReconciler } from '../../../src/controllers/volumebackup/machine-backup-reconciler.ts';
import { eventsFor } from '../../../src/runtime/events/index.ts';
import type { Condition } from '../../../src/runtime/write/conditions.ts';
import { FakeCluster } from '../../support/fake/cluster.ts';
import { harness } from '../../support/fake/harness.ts';
import { backup, machine } from './fixtures.ts';

const NOW = new Date('2026-01-01T12:00:00Z');
const OTHER_FINALIZER = 'example.com/hold';

async function setup(m: Machine, ...backups: VolumeBackup[]) {
  const cluster = new FakeCluster({ now: () => NOW });
  cluster.seed(MACHINE, m);
  cluster.seed(VOLUME_BACKUP, ...backups);
  return harness<Machine>(
    cluster,
    async (c, events) =>
      new MachineBackupReconciler({
        client: c.kubeClient,
        machines: await c.informer(MACHINE),
        backups: await c.informer(VOLUME_BACKUP),
        events: eventsFor(events, MACHINE_BACKUP_CONTROLLER, MACHINE),
        now: () => NOW,
      }),
  );
}

/** A Machine being deleted, held by our finalizer (and `more`), in `phase`, its claims named in its status. */
function deleted(phase: string, annotations?: Record<string, string>, ...more: string[]): Machine {
  const m = machine(
    {},
    { finalizers: [VOLUME_BACKUP_FINALIZER, ...more], deletionTimestamp: NOW, annotations },
  );
  return {
    ...m,
    status: {
      phase: phase as NonNullable<Machine['status']>['phase'],
      volumes: [
        { name: 'data', claimName: 'web-data' },
        { name: 'logs', claimName: 'web-logs' },
      ],
    },
  };
}

const completed = () =>
  backup({
    phase: 'Completed',
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'BackupCompleted',
        message: 'all 2 volumes copied',
        lastTransitionTime: '2026-01-01T11:00:00Z',
      },
    ],
  });

/** The `VolumeBackup` condition, checking it is all the status handed over (the Machine controller owns the rest). */
function onlyCondition(status: Machine['status'] | undefined): Condition | undefined {
  assert.deepEqual(Object.keys(status ?? {}), ['conditions']);
  assert.deepEqual(
    status?.conditions?.map((c) => c.type),
    ['VolumeBackup'],
  );
  return status?.conditions?.[0];
}

describe('MachineBackupReconciler', () => {
  it('adds the finalizer to a Machine whose backup policy is OnDelete, beside those of others', async () => {
    const h = await setup(machine({}, { finalizers: [OTHER_FINALIZER] }));
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['patch Machine web']);
    assert.equal(h.client.writes()[0]?.patchType, 'json');
    const stored = h.cluster.server.get(MACHINE, 'ns', 'web');
    assert.deepEqual(stored.metadata.finalizers, [OTHER_FINALIZER, VOLUME_BACKUP_FINALIZER]);
    assert.deepEqual(h.status.written, []);
  });

  it('removes the finalizer from a Machine whose policy became None', async () => {
    const h = await setup(machine({ backup: { policy: 'None' } }, { finalizers: [VOLUME_BACKUP_FINALIZER] }));
    await h.reconcile('web');
    assert.equal(h.cluster.server.get(MACHINE, 'ns', 'web').metadata.finalizers, undefined);
    assert.deepEqual(h.eventSummary(), ['Normal FinalizerRemoved']);
  });

  it('a deleted Machine not yet Stopped: waits, saying so in its condition only, with no requeue', async () => {
    const h = await setup(deleted('Stopping'));
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writes(), []);
    const waiting = onlyCondition(h.status.last('web'));
    assert.equal(waiting?.reason, 'BackupPending');
    assert.match(waiting?.message ?? '', /waiting for the Machine to stop \(phase Stopping\)/);
    assert.deepEqual(h.eventSummary(), ['Normal BackupPending']);

    await h.reconcile('web');
    assert.deepEqual(h.eventSummary(), ['Normal BackupPending'], 'an Event only when the reason changes');
  });

  it('a Stopped Machine: records the VolumeBackup of its claims, and says so in its condition', async () => {
    const h = await setup(deleted('Stopped'));
    await h.reconcile('web');
    assert.deepEqual(h.client.writeSummary(), ['create VolumeBackup web-0b7c9a52']);
    const created = h.client.writes()[0]?.body as VolumeBackup;
    assert.deepEqual(created.spec, backup().spec);
    assert.equal(onlyCondition(h.status.last('web'))?.reason, 'BackupInProgress');
    assert.deepEqual(h.eventSummary(), ['Normal BackupStarted']);
  });

  it('a VolumeBackup the cache does not show yet (AlreadyExists) is no error', async () => {
    const h = await setup(deleted('Stopped'));
    h.cluster.seed(VOLUME_BACKUP, backup());
    assert.equal(await h.reconcile('web'), undefined);
    assert.equal(h.client.writes()[0]?.error?.reason, 'AlreadyExists');
    assert.equal(onlyCondition(h.status.last('web'))?.reason, 'BackupInProgress');
  });

  it('the backup Completed: the condition first, then the finalizer goes, and with it the Machine', async () => {
    const h = await setup(deleted('Stopped'), completed());
    const writesAtFlush: string[][] = [];
    const flush = h.status.flush.bind(h.status);
    h.status.flush = (m) => {
      writesAtFlush.push(h.client.writeSummary());
      return flush(m);
    };
    await h.reconcile('web');
    const done = onlyCondition(h.status.last('web'));
    assert.equal(done?.status, 'True');
    assert.equal(done?.reason, 'BackupCompleted');
    // Written, not only handed over, before the finalizer patch lets the Machine go.
    assert.deepEqual(h.status.flushed, [{ name: 'web', written: 1 }]);
    assert.deepEqual(writesAtFlush, [[]], 'flushed before the finalizer patch');
    assert.deepEqual(h.client.writeSummary(), ['patch Machine web']);
    assert.deepEqual(h.eventSummary(), ['Normal BackupCompleted', 'Normal FinalizerRemoved']);
    assert.throws(
      () => h.cluster.server.get(MACHINE, 'ns', 'web'),
      /not found/,
      'no finalizer left: deleted',
    );
  });

  it("the backup Completed: another controller's finalizer still holds the Machine", async () => {
    const h = await setup(deleted('Stopped', undefined, OTHER_FINALIZER), completed());
    await h.reconcile('web');
    assert.deepEqual(h.cluster.server.get(MACHINE, 'ns', 'web').metadata.finalizers, [OTHER_FINALIZER]);
  });

  it('the backup Failed: the Machine is kept, with a Warning saying how to let it go', async () => {
    const failed = backup({
      phase: 'Failed',
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'BackupFailed',
          message: 'volume data: 3 of 3 copy attempts failed',
          lastTransitionTime: '2026-01-01T11:00:00Z',
        },
      ],
    });
    const h = await setup(deleted('Stopped'), failed);
    await h.reconcile('web');
    assert.deepEqual(h.client.writes(), []);
    const held = onlyCondition(h.status.last('web'));
    assert.equal(held?.reason, 'BackupFailed');
    assert.match(held?.message ?? '', /3 of 3 copy attempts failed.*skip-backup/);
    assert.deepEqual(h.eventSummary(), ['Warning BackupFailed']);
  });

  describe('the skip-backup annotation', () => {
    const skip = { [SKIP_BACKUP_ANNOTATION]: 'true' };

    it('with no VolumeBackup yet: lets the Machine go at once, without one', async () => {
      const h = await setup(deleted('Stopping', skip));
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary(), ['patch Machine web']);
      assert.equal(onlyCondition(h.status.last('web'))?.reason, 'BackupSkipped');
      assert.deepEqual(h.eventSummary(), ['Normal BackupSkipped', 'Normal FinalizerRemoved']);
    });

    it('with a VolumeBackup under way: waits until it records the skip', async () => {
      const h = await setup(deleted('Stopped', skip), backup({ phase: 'Running' }));
      await h.reconcile('web');
      assert.deepEqual(h.client.writes(), []);
      assert.match(
        onlyCondition(h.status.last('web'))?.message ?? '',
        /waiting for VolumeBackup web-0b7c9a52 to record the skip/,
      );
    });
  });

  it('a Machine gone from the server meanwhile: nothing to do, no error', async () => {
    const h = await setup(machine());
    h.cluster.server.delete(MACHINE, 'ns', 'web');
    assert.equal(await h.reconcile('web'), undefined);
    assert.equal(h.client.writes()[0]?.error?.reason, 'NotFound');
  });
});
