// reconcile() of the machine-backup controller (the VolumeBackup controller's half on Machines)
// against a fake API server and real informers filled from it: the finalizer it adds and removes, the
// VolumeBackup it records (and its record of it, by name and uid, on the Machine), and the fields of
// the Machine's status it hands over.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MACHINE,
  type Machine,
  SKIP_BACKUP_ANNOTATION,
  VOLUME_BACKUP,
  VOLUME_BACKUP_FINALIZER,
  type VolumeBackup,
  type VolumeBackupReference,
} from '../../../src/apis/index.ts';
import { CONTROLLER_NAME as MACHINE_BACKUP_CONTROLLER } from '../../../src/controllers/machinebackup/index.ts';
import { MachineBackupReconciler } from '../../../src/controllers/machinebackup/reconciler.ts';
import { eventsFor } from '../../../src/runtime/events/index.ts';
import type { Condition } from '../../../src/runtime/write/conditions.ts';
import { FakeCluster } from '../../support/fake/cluster.ts';
import { harness } from '../../support/fake/harness.ts';
import { backup, machine, manifest, UID } from '../volumebackup/fixtures.ts';

const NOW = new Date('2026-01-01T12:00:00Z');
const OTHER_FINALIZER = 'example.com/hold';
/** The record of the fixture's VolumeBackup, as the operator writes it when it creates it. */
const RECORD: VolumeBackupReference = { name: 'web-0b7c9a52', uid: 'vb-uid' };

async function setup(m: Machine, ...backups: VolumeBackup[]) {
  const cluster = new FakeCluster({ now: () => NOW });
  cluster.seed(MACHINE, m);
  cluster.seed(VOLUME_BACKUP, ...backups);
  return harness<Machine>(
    cluster,
    { for: MACHINE, status: 'apply' },
    async (c, events) =>
      new MachineBackupReconciler({
        client: c.kubeClient,
        backups: await c.informer(VOLUME_BACKUP),
        events: eventsFor(events, MACHINE_BACKUP_CONTROLLER, MACHINE),
        now: () => NOW,
      }),
  );
}

/**
 * A Machine being deleted, held by our finalizer (and `more`), in `phase`, its claims named in its
 * status, with the operator's record of its VolumeBackup when `recorded` is given.
 */
function deleted(
  phase: string,
  options: { annotations?: Record<string, string>; recorded?: VolumeBackupReference } = {},
  ...more: string[]
): Machine {
  const m = machine(
    {},
    {
      finalizers: [VOLUME_BACKUP_FINALIZER, ...more],
      deletionTimestamp: NOW,
      annotations: options.annotations,
    },
  );
  return {
    ...m,
    status: {
      phase: phase as NonNullable<Machine['status']>['phase'],
      volumes: [
        { name: 'data', claimName: 'web-data' },
        { name: 'logs', claimName: 'web-logs' },
      ],
      ...(options.recorded ? { volumeBackup: options.recorded } : {}),
    },
  };
}

/** The fixture's VolumeBackup, Completed with a verified copy of each volume. */
const completed = () =>
  backup({
    phase: 'Completed',
    volumes: [
      { name: 'data', backupClaimName: 'web-0b7c9a52-data', manifest: manifest(1) },
      { name: 'logs', backupClaimName: 'web-0b7c9a52-logs', manifest: manifest(2) },
    ],
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'BackupCompleted',
        message: 'all 2 volumes copied and verified',
        lastTransitionTime: '2026-01-01T11:00:00Z',
      },
      {
        type: 'Restorable',
        status: 'True',
        reason: 'BackupClaimsBound',
        message: 'all 2 backup claims are Bound',
        lastTransitionTime: '2026-01-01T11:00:00Z',
      },
    ],
  });

/**
 * The `VolumeBackup` condition, checking it is all the status handed over (the Machine controller
 * owns the rest) besides the record of the operator's VolumeBackup, which must be `record` (an apply
 * drops what it omits, so every write carries it once there is one).
 */
function onlyCondition(
  status: Machine['status'] | undefined,
  record?: VolumeBackupReference,
): Condition | undefined {
  assert.deepEqual(Object.keys(status ?? {}), record ? ['conditions', 'volumeBackup'] : ['conditions']);
  assert.deepEqual(status?.volumeBackup, record);
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
    assert.deepEqual(created.spec, {
      ...backup().spec,
      copyAs: { runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532 },
    });
    assert.equal(h.status.last('web')?.conditions?.[0]?.reason, 'BackupInProgress');
    assert.deepEqual(h.eventSummary(), ['Normal BackupStarted']);
  });

  it("a Stopped Machine with a reference: the VolumeBackup copies as its provider's pod runs (status.copyAs)", async () => {
    const m = deleted('Stopped');
    m.spec = {
      infrastructureRef: {
        apiVersion: 'examples.basicoperator.dev/v1alpha1',
        kind: 'StatefulSetMachine',
        name: 'web',
      },
    };
    m.status = { ...m.status, copyAs: { runAsUser: 999, runAsGroup: 999, fsGroup: 999 } };
    const h = await setup(m);
    await h.reconcile('web');
    assert.deepEqual(h.client.writeSummary(), ['create VolumeBackup web-0b7c9a52']);
    const created = h.client.writes()[0]?.body as VolumeBackup;
    assert.deepEqual(created.spec.copyAs, { runAsUser: 999, runAsGroup: 999, fsGroup: 999 });
  });

  it('on create: records the name and uid the API server answered, with the condition, and flushes them at once', async () => {
    const h = await setup(deleted('Stopped'));
    await h.reconcile('web');
    const stored = h.cluster.server.get(VOLUME_BACKUP, 'ns', 'web-0b7c9a52');
    assert.ok(stored.metadata.uid, 'the server gave it a uid');
    const record = { name: 'web-0b7c9a52', uid: stored.metadata.uid! };
    assert.equal(h.status.written.length, 1);
    assert.equal(onlyCondition(h.status.last('web'), record)?.reason, 'BackupInProgress');
    assert.deepEqual(h.status.flushed, [{ name: 'web', written: 1 }], 'written, not only handed over');
  });

  it('keeps the record in every later status it hands over', async () => {
    const h = await setup(deleted('Stopped', { recorded: RECORD }), backup({ phase: 'Running' }));
    await h.reconcile('web');
    assert.equal(onlyCondition(h.status.last('web'), RECORD)?.reason, 'BackupInProgress');
  });

  it('a VolumeBackup the cache does not show yet (AlreadyExists): no error, no record; then a conflict', async () => {
    const h = await setup(deleted('Stopped'));
    h.cluster.seed(VOLUME_BACKUP, backup());
    assert.equal(await h.reconcile('web'), undefined);
    assert.equal(h.client.writes()[0]?.error?.reason, 'AlreadyExists');
    assert.deepEqual(h.status.written, [], "not provably the operator's: nothing recorded");
    assert.deepEqual(h.eventSummary(), []);

    await h.cluster.sync();
    await h.reconcile('web');
    assert.equal(onlyCondition(h.status.last('web'))?.reason, 'BackupConflict');
  });

  it('the backup Completed: the condition first, then the finalizer goes, and with it the Machine', async () => {
    const h = await setup(deleted('Stopped', { recorded: RECORD }), completed());
    const writesAtFlush: string[][] = [];
    const flush = h.status.flush.bind(h.status);
    h.status.flush = (m) => {
      writesAtFlush.push(h.client.writeSummary());
      return flush(m);
    };
    await h.reconcile('web');
    const done = onlyCondition(h.status.last('web'), RECORD);
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
    const h = await setup(deleted('Stopped', { recorded: RECORD }, OTHER_FINALIZER), completed());
    await h.reconcile('web');
    assert.deepEqual(h.cluster.server.get(MACHINE, 'ns', 'web').metadata.finalizers, [OTHER_FINALIZER]);
  });

  it('a Completed VolumeBackup the operator did not record: the Machine is kept, with a BackupConflict Warning', async () => {
    for (const recorded of [undefined, { name: 'web-0b7c9a52', uid: 'vb-before' }]) {
      const h = await setup(deleted('Stopped', recorded ? { recorded } : {}), completed());
      await h.reconcile('web');
      assert.deepEqual(h.client.writes(), [], 'no finalizer patch');
      assert.deepEqual(h.cluster.server.get(MACHINE, 'ns', 'web').metadata.finalizers, [
        VOLUME_BACKUP_FINALIZER,
      ]);
      const held = onlyCondition(h.status.last('web'), recorded);
      assert.equal(held?.status, 'False');
      assert.equal(held?.reason, 'BackupConflict');
      assert.ok(held?.message.includes(`Machine web (uid ${UID})`), held?.message);
      assert.match(held?.message ?? '', /VolumeBackup web-0b7c9a52 \(uid vb-uid/);
      assert.deepEqual(h.eventSummary(), ['Warning BackupConflict']);
      assert.equal(h.events.events[0]?.note, held?.message, 'the Event says what the condition says');
    }
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
    const h = await setup(deleted('Stopped', { recorded: RECORD }), failed);
    await h.reconcile('web');
    assert.deepEqual(h.client.writes(), []);
    const held = onlyCondition(h.status.last('web'), RECORD);
    assert.equal(held?.reason, 'BackupFailed');
    assert.match(held?.message ?? '', /3 of 3 copy attempts failed.*skip-backup/);
    assert.deepEqual(h.eventSummary(), ['Warning BackupFailed']);
  });

  describe('the skip-backup annotation', () => {
    const skip = { [SKIP_BACKUP_ANNOTATION]: 'true' };

    it('with no VolumeBackup yet: lets the Machine go at once, without one', async () => {
      const h = await setup(deleted('Stopping', { annotations: skip }));
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary(), ['patch Machine web']);
      assert.equal(onlyCondition(h.status.last('web'))?.reason, 'BackupSkipped');
      assert.deepEqual(h.eventSummary(), ['Normal BackupSkipped', 'Normal FinalizerRemoved']);
    });

    it('with a VolumeBackup under way: waits until it records the skip', async () => {
      const h = await setup(
        deleted('Stopped', { annotations: skip, recorded: RECORD }),
        backup({ phase: 'Running' }),
      );
      await h.reconcile('web');
      assert.deepEqual(h.client.writes(), []);
      assert.match(
        onlyCondition(h.status.last('web'), RECORD)?.message ?? '',
        /waiting for VolumeBackup web-0b7c9a52 to record the skip/,
      );
    });

    it("with a VolumeBackup that is not the operator's: lets the Machine go", async () => {
      const h = await setup(deleted('Stopped', { annotations: skip }), backup({ phase: 'Running' }));
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary(), ['patch Machine web']);
      assert.equal(onlyCondition(h.status.last('web'))?.reason, 'BackupSkipped');
    });
  });

  it('a Machine gone from the server meanwhile: nothing to do, no error', async () => {
    const h = await setup(machine());
    h.cluster.server.delete(MACHINE, 'ns', 'web');
    assert.equal(await h.reconcile('web'), undefined);
    assert.equal(h.client.writes()[0]?.error?.reason, 'NotFound');
  });
});
