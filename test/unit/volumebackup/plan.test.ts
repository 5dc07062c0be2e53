import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Machine, VolumeBackupStatus } from '../../../src/apis/index.ts';
import { backupFor, type MachinePlan, planMachine } from '../../../src/controllers/volumebackup/plan.ts';
import { backup, machine } from './fixtures.ts';

const FINALIZER = 'infra.basicoperator.dev/volume-backup';
const DELETED = '2025-01-01T00:00:00Z' as unknown as Date;

function deleting(
  overrides: { annotations?: Record<string, string>; phase?: 'Stopping' | 'Stopped' } = {},
): Machine {
  const m = machine(
    {},
    { finalizers: [FINALIZER], deletionTimestamp: DELETED, annotations: overrides.annotations },
  );
  m.status = {
    phase: overrides.phase ?? 'Stopped',
    volumes: [
      { name: 'data', claimName: 'web-data', phase: 'Bound' },
      { name: 'logs', claimName: 'web-logs', phase: 'Bound' },
    ],
  };
  return m;
}

function waitReason(plan: MachinePlan): string | undefined {
  return plan.action === 'wait' ? plan.condition.reason : undefined;
}

const ready = (reason: string, message: string) => ({
  type: 'Ready',
  status: 'False' as const,
  reason,
  message,
  lastTransitionTime: '2025-01-01T00:00:00Z',
});
const withStatus = (status: VolumeBackupStatus) => backup(status);

describe('planMachine: a live Machine', () => {
  it('gets the finalizer when its policy is OnDelete (the default)', () => {
    assert.deepEqual(planMachine(machine(), undefined), { action: 'add-finalizer' });
    assert.deepEqual(
      planMachine(machine({ backup: { policy: 'OnDelete' } }, { finalizers: [FINALIZER] }), undefined),
      {
        action: 'none',
      },
    );
  });

  it('loses it when its policy is None', () => {
    const plan = planMachine(
      machine({ backup: { policy: 'None' } }, { finalizers: ['other', FINALIZER] }),
      undefined,
    );
    assert.equal(plan.action, 'remove-finalizer');
    assert.deepEqual(planMachine(machine({ backup: { policy: 'None' } }), undefined), { action: 'none' });
  });
});

describe('planMachine: a Machine being deleted', () => {
  it('does nothing without our finalizer', () => {
    const m = deleting();
    m.metadata.finalizers = ['someone-else'];
    assert.deepEqual(planMachine(m, undefined), { action: 'none' });
  });

  it('waits for the Machine controller to report Stopped', () => {
    const plan = planMachine(deleting({ phase: 'Stopping' }), undefined);
    assert.equal(waitReason(plan), 'BackupPending');
    assert.match(
      plan.action === 'wait' ? plan.condition.message : '',
      /waiting for the Machine to stop \(phase Stopping\)/,
    );
  });

  it('records the VolumeBackup, named after the Machine, from the claims in its status', () => {
    const plan = planMachine(deleting(), undefined);
    assert.equal(plan.action, 'create-backup');
    if (plan.action !== 'create-backup') return;
    assert.equal(plan.backup.metadata.name, 'web-0b7c9a52');
    assert.deepEqual(plan.backup.spec, {
      machineName: 'web',
      machineUID: '0b7c9a52-1111-2222-3333-444455556666',
      volumes: [
        { name: 'data', claimName: 'web-data' },
        { name: 'logs', claimName: 'web-logs' },
      ],
    });
    assert.equal(plan.backup.metadata.ownerReferences, undefined, 'not owned: it outlives the Machine');
    assert.equal(plan.condition.type, 'VolumeBackup');
    assert.equal(plan.condition.reason, 'BackupInProgress');
  });

  it('waits while the status does not name every claim', () => {
    const m = deleting();
    m.status!.volumes = [{ name: 'data', claimName: 'web-data' }];
    assert.equal(backupFor(m), undefined);
    assert.equal(waitReason(planMachine(m, undefined)), 'BackupPending');
  });

  it('reports progress, then failure with the way out', () => {
    const running = withStatus({
      phase: 'Running',
      conditions: [ready('BackupInProgress', 'copied 1 of 2 volumes')],
    });
    const inProgress = planMachine(deleting(), running);
    assert.equal(waitReason(inProgress), 'BackupInProgress');
    assert.match(
      inProgress.action === 'wait' ? inProgress.condition.message : '',
      /is Running: copied 1 of 2/,
    );

    const failed = withStatus({
      phase: 'Failed',
      conditions: [ready('BackupFailed', 'volume data: 3 of 3 failed')],
    });
    const plan = planMachine(deleting(), failed);
    assert.equal(waitReason(plan), 'BackupFailed');
    assert.match(plan.action === 'wait' ? plan.condition.message : '', /3 of 3 failed.*skip-backup="true"/);
  });

  it('releases the Machine once the backup Completed, saying so first', () => {
    const plan = planMachine(deleting(), withStatus({ phase: 'Completed' }));
    assert.equal(plan.action, 'remove-finalizer');
    assert.equal(plan.action === 'remove-finalizer' && plan.reason, 'BackupCompleted');
    assert.equal(plan.action === 'remove-finalizer' && plan.condition?.status, 'True');
  });

  it('with the skip annotation: releases at once without a backup, or once the backup recorded the skip', () => {
    const skip = { annotations: { 'infra.basicoperator.dev/skip-backup': 'true' } };
    const none = planMachine(deleting({ ...skip, phase: 'Stopping' }), undefined);
    assert.equal(none.action === 'remove-finalizer' && none.reason, 'BackupSkipped');

    const failed = withStatus({ phase: 'Failed', conditions: [ready('BackupFailed', 'x')] });
    assert.equal(waitReason(planMachine(deleting(skip), failed)), 'BackupSkipped');
    failed.status!.conditions!.push({
      ...ready('SkipAnnotation', 'skipped'),
      type: 'Skipped',
      status: 'True',
    });
    const recorded = planMachine(deleting(skip), failed);
    assert.equal(recorded.action === 'remove-finalizer' && recorded.reason, 'BackupSkipped');
  });

  it('lets go at once with policy None or without volumes', () => {
    const none = deleting();
    none.spec.backup = { policy: 'None' };
    assert.equal(planMachine(none, undefined).action, 'remove-finalizer');
    const empty = deleting({ phase: 'Stopping' });
    empty.spec.volumes = [];
    const plan = planMachine(empty, undefined);
    assert.equal(plan.action === 'remove-finalizer' && plan.reason, 'NoVolumes');
  });

  it('a Machine with infrastructureRef: backs up the volumes its provider reported, once it is Stopped', () => {
    const referenced = (phase: 'Stopping' | 'Stopped') => {
      const m = deleting({ phase });
      m.spec = {
        infrastructureRef: {
          apiVersion: 'examples.basicoperator.dev/v1alpha1',
          kind: 'StatefulSetMachine',
          name: 'web',
        },
      };
      return m;
    };
    assert.equal(waitReason(planMachine(referenced('Stopping'), undefined)), 'BackupPending');
    const plan = planMachine(referenced('Stopped'), undefined);
    assert.equal(plan.action, 'create-backup');
    assert.deepEqual(backupFor(referenced('Stopped'))?.spec.volumes, [
      { name: 'data', claimName: 'web-data' },
      { name: 'logs', claimName: 'web-logs' },
    ]);
    const none = referenced('Stopped');
    none.status = { ...none.status, volumes: [] };
    const released = planMachine(none, undefined);
    assert.equal(released.action === 'remove-finalizer' && released.reason, 'NoVolumes');
  });

  it('refuses a VolumeBackup of that name that belongs to another Machine', () => {
    const foreign = backup();
    foreign.spec.machineUID = 'another';
    assert.equal(waitReason(planMachine(deleting(), foreign)), 'BackupConflict');
  });
});
