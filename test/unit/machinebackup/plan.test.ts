import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Machine, VolumeBackup, VolumeBackupStatus } from '../../../src/apis/index.ts';
import {
  backupFor,
  copyAsFor,
  type MachinePlan,
  planMachine,
} from '../../../src/controllers/machinebackup/logic/plan.ts';
import { backup, machine, manifest, UID } from '../volumebackup/fixtures.ts';

const FINALIZER = 'infra.basicoperator.dev/volume-backup';
const DELETED = '2025-01-01T00:00:00Z' as unknown as Date;
const SKIP = { 'infra.basicoperator.dev/skip-backup': 'true' };
/** What the Machine's status records of the VolumeBackup the operator created: the fixture's. */
const RECORD = { name: 'web-0b7c9a52', uid: 'vb-uid' };

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

function waitMessage(plan: MachinePlan): string {
  return plan.action === 'wait' ? plan.condition.message : '';
}

const ready = (reason: string, message: string) => ({
  type: 'Ready',
  status: 'False' as const,
  reason,
  message,
  lastTransitionTime: '2025-01-01T00:00:00Z',
});
const withStatus = (status: VolumeBackupStatus) => backup(status);

/** The fixture's backup, Completed with a verified copy of both volumes. */
function verified(): VolumeBackup {
  return backup({
    phase: 'Completed',
    volumes: [
      { name: 'data', backupClaimName: 'web-0b7c9a52-data', manifest: manifest(1) },
      { name: 'logs', backupClaimName: 'web-0b7c9a52-logs', manifest: manifest(2) },
    ],
    conditions: [
      { ...ready('BackupCompleted', 'all 2 volumes copied and verified'), status: 'True' },
      { ...ready('BackupClaimsBound', 'all 2 backup claims are Bound'), type: 'Restorable', status: 'True' },
    ],
  });
}

describe("copyAsFor: whom a Machine's backup copies run as where root is refused", () => {
  const POSTGRES = { runAsUser: 999, runAsGroup: 999, fsGroup: 999 };
  const referenced = (copyAs?: typeof POSTGRES): Machine => {
    const m = deleting();
    m.spec = {
      infrastructureRef: {
        apiVersion: 'examples.basicoperator.dev/v1alpha1',
        kind: 'StatefulSetMachine',
        name: 'db',
      },
    };
    if (copyAs) m.status = { ...m.status, copyAs };
    return m;
  };

  it("a Machine with a reference: what its provider reports (the Machine's status.copyAs)", () => {
    const m = referenced(POSTGRES);
    assert.deepEqual(copyAsFor(m), POSTGRES);
    const plan = planMachine(m, undefined, undefined);
    assert.equal(plan.action, 'create-backup');
    if (plan.action === 'create-backup') assert.deepEqual(plan.backup.spec.copyAs, POSTGRES);
  });

  it('a Machine with a reference whose provider reports none (a root pod, a provider that does not say): none, so 65532', () => {
    const m = referenced();
    assert.equal(copyAsFor(m), undefined);
    const plan = planMachine(m, undefined, undefined);
    assert.equal(plan.action, 'create-backup');
    if (plan.action === 'create-backup') assert.equal('copyAs' in plan.backup.spec, false);
  });

  it("an inline Machine: its PodMachine's report, the same as its pod security context gives", () => {
    const psc = { runAsUser: 999, runAsGroup: 998, fsGroup: 997 };
    const m = { ...deleting(), spec: machine({ podSecurityContext: psc }).spec };
    m.status = { ...m.status, copyAs: psc };
    assert.deepEqual(copyAsFor(m), psc);
    const plan = planMachine(m, undefined, undefined);
    assert.equal(plan.action, 'create-backup');
    if (plan.action === 'create-backup') assert.deepEqual(plan.backup.spec.copyAs, psc);
  });

  it('the report wins over the spec', () => {
    const m = machine({ podSecurityContext: { runAsUser: 5 } });
    m.status = { copyAs: POSTGRES };
    assert.deepEqual(copyAsFor(m), POSTGRES);
  });

  it("an inline Machine whose status has none (written before the contract had copyAs): its spec's, 65532 for each it does not name", () => {
    assert.deepEqual(copyAsFor(machine()), { runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532 });
    assert.deepEqual(copyAsFor(machine({ podSecurityContext: { runAsUser: 999 } })), {
      runAsUser: 999,
      runAsGroup: 65532,
      fsGroup: 65532,
    });
    assert.deepEqual(copyAsFor(machine({ podSecurityContext: { runAsGroup: 0, fsGroup: 0 } })), {
      runAsUser: 65532,
      runAsGroup: 0,
      fsGroup: 0,
    });
  });

  it('none for an inline pod that runs as root (no non-root copy keeps its files), nor for ids no pod may have', () => {
    assert.equal(copyAsFor(machine({ podSecurityContext: { runAsUser: 0 } })), undefined);
    assert.equal(copyAsFor(machine({ podSecurityContext: { runAsUser: 3000000000 } })), undefined);
  });
});

describe('planMachine: a live Machine', () => {
  it('gets the finalizer when its policy is OnDelete (the default)', () => {
    assert.deepEqual(planMachine(machine(), undefined, undefined), { action: 'add-finalizer' });
    assert.deepEqual(
      planMachine(
        machine({ backup: { policy: 'OnDelete' } }, { finalizers: [FINALIZER] }),
        undefined,
        undefined,
      ),
      { action: 'none' },
    );
  });

  it('loses it when its policy is None', () => {
    const plan = planMachine(
      machine({ backup: { policy: 'None' } }, { finalizers: ['other', FINALIZER] }),
      undefined,
      undefined,
    );
    assert.equal(plan.action, 'remove-finalizer');
    assert.deepEqual(planMachine(machine({ backup: { policy: 'None' } }), undefined, undefined), {
      action: 'none',
    });
  });
});

describe('planMachine: a Machine being deleted', () => {
  it('does nothing without our finalizer', () => {
    const m = deleting();
    m.metadata.finalizers = ['someone-else'];
    assert.deepEqual(planMachine(m, undefined, undefined), { action: 'none' });
  });

  it('waits for the Machine controller to report Stopped', () => {
    const plan = planMachine(deleting({ phase: 'Stopping' }), undefined, undefined);
    assert.equal(waitReason(plan), 'BackupPending');
    assert.match(waitMessage(plan), /waiting for the Machine to stop \(phase Stopping\)/);
  });

  it('records the VolumeBackup, named after the Machine, from the claims in its status', () => {
    const plan = planMachine(deleting(), undefined, undefined);
    assert.equal(plan.action, 'create-backup');
    if (plan.action !== 'create-backup') return;
    assert.equal(plan.backup.metadata.name, 'web-0b7c9a52');
    assert.deepEqual(plan.backup.spec, {
      machineName: 'web',
      machineUID: '0b7c9a52-1111-2222-3333-444455556666',
      copyAs: { runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532 },
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
    assert.equal(waitReason(planMachine(m, undefined, undefined)), 'BackupPending');
  });

  it('reports progress, then failure with the way out', () => {
    const running = withStatus({
      phase: 'Running',
      conditions: [ready('BackupInProgress', 'copied 1 of 2 volumes')],
    });
    const inProgress = planMachine(deleting(), running, RECORD);
    assert.equal(waitReason(inProgress), 'BackupInProgress');
    assert.match(waitMessage(inProgress), /is Running: copied 1 of 2/);

    const failed = withStatus({
      phase: 'Failed',
      conditions: [ready('BackupFailed', 'volume data: 3 of 3 failed')],
    });
    const plan = planMachine(deleting(), failed, RECORD);
    assert.equal(waitReason(plan), 'BackupFailed');
    assert.match(waitMessage(plan), /3 of 3 failed.*skip-backup="true"/);
  });

  it('releases the Machine once its recorded backup Completed with a verified copy of every volume, saying so first', () => {
    const plan = planMachine(deleting(), verified(), RECORD);
    assert.equal(plan.action, 'remove-finalizer');
    assert.equal(plan.action === 'remove-finalizer' && plan.reason, 'BackupCompleted');
    assert.equal(plan.action === 'remove-finalizer' && plan.condition?.status, 'True');
  });

  it('with the skip annotation: releases at once without a backup, or once the backup recorded the skip', () => {
    const skip = { annotations: SKIP };
    const none = planMachine(deleting({ ...skip, phase: 'Stopping' }), undefined, undefined);
    assert.equal(none.action === 'remove-finalizer' && none.reason, 'BackupSkipped');

    const failed = withStatus({ phase: 'Failed', conditions: [ready('BackupFailed', 'x')] });
    assert.equal(waitReason(planMachine(deleting(skip), failed, RECORD)), 'BackupSkipped');
    failed.status!.conditions!.push({
      ...ready('SkipAnnotation', 'skipped'),
      type: 'Skipped',
      status: 'True',
    });
    const recorded = planMachine(deleting(skip), failed, RECORD);
    assert.equal(recorded.action === 'remove-finalizer' && recorded.reason, 'BackupSkipped');
  });

  it('lets go at once with policy None or without volumes', () => {
    const none = deleting();
    none.spec.backup = { policy: 'None' };
    assert.equal(planMachine(none, undefined, undefined).action, 'remove-finalizer');
    const empty = deleting({ phase: 'Stopping' });
    empty.spec.volumes = [];
    const plan = planMachine(empty, undefined, undefined);
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
    assert.equal(waitReason(planMachine(referenced('Stopping'), undefined, undefined)), 'BackupPending');
    const plan = planMachine(referenced('Stopped'), undefined, undefined);
    assert.equal(plan.action, 'create-backup');
    assert.deepEqual(backupFor(referenced('Stopped'))?.spec.volumes, [
      { name: 'data', claimName: 'web-data' },
      { name: 'logs', claimName: 'web-logs' },
    ]);
    const none = referenced('Stopped');
    none.status = { ...none.status, volumes: [] };
    const released = planMachine(none, undefined, undefined);
    assert.equal(released.action === 'remove-finalizer' && released.reason, 'NoVolumes');
  });

  it('a Machine that never had a provider object: let go once Stopped with nothing of it found, never before, never with claims known', () => {
    // An inline Machine whose PodMachine name was taken (InfrastructureOwnedByOther): its status never
    // named a claim, and on deletion the Machine controller found no provider object of it.
    const never = (phase: 'Stopping' | 'Stopped', reason: string) => {
      const m = deleting({ phase });
      m.status = {
        phase,
        conditions: [
          {
            type: 'InfrastructureReady',
            status: 'False',
            reason,
            message: 'PodMachine web is not controlled by this Machine; it is left alone',
            lastTransitionTime: '2025-01-01T00:00:00Z',
          },
        ],
      };
      return m;
    };
    const released = planMachine(never('Stopped', 'InfrastructureDeleted'), undefined, undefined);
    assert.equal(released.action === 'remove-finalizer' && released.reason, 'NoVolumes');
    assert.match(
      released.action === 'remove-finalizer' ? released.message : '',
      /no provider object of the Machine holds its volumes and its status never named a claim/,
    );
    assert.equal(
      waitReason(planMachine(never('Stopping', 'InfrastructureDeleted'), undefined, undefined)),
      'BackupPending',
    );
    assert.equal(
      waitReason(planMachine(never('Stopped', 'InfrastructureReady'), undefined, undefined)),
      'BackupPending',
    );
    const known = never('Stopped', 'InfrastructureDeleted');
    known.status = { ...known.status, volumes: [{ name: 'data', claimName: 'web-data', phase: 'Bound' }] };
    assert.notEqual(planMachine(known, undefined, undefined).action, 'remove-finalizer');
  });

  it('refuses a VolumeBackup of that name that belongs to another Machine', () => {
    const foreign = backup();
    foreign.spec.machineUID = 'another';
    assert.equal(waitReason(planMachine(deleting(), foreign, undefined)), 'BackupConflict');
  });
});

describe('planMachine: only the VolumeBackup the operator created releases the Machine', () => {
  it('one of the expected name that the operator did not record: BackupConflict naming both, even Completed', () => {
    for (const found of [verified(), withStatus({ phase: 'Running' })]) {
      const plan = planMachine(deleting(), found, undefined);
      assert.equal(plan.action, 'wait', `${found.status?.phase}: the Machine is kept`);
      assert.equal(waitReason(plan), 'BackupConflict');
      const message = waitMessage(plan);
      assert.match(message, /VolumeBackup web-0b7c9a52 \(uid vb-uid, for Machine web uid 0b7c9a52-1111/);
      assert.ok(message.includes(`Machine web (uid ${UID})`), message);
      assert.match(message, /the operator has recorded no VolumeBackup for it/);
      assert.match(message, /skip-backup="true"/, 'says the way out');
    }
  });

  it('one whose uid is not the recorded one (deleted and made again by hand): BackupConflict naming the recorded one', () => {
    const plan = planMachine(deleting(), verified(), { name: 'web-0b7c9a52', uid: 'vb-before' });
    assert.equal(waitReason(plan), 'BackupConflict');
    const message = waitMessage(plan);
    assert.match(message, /VolumeBackup web-0b7c9a52 \(uid vb-uid/);
    assert.match(message, /the operator recorded VolumeBackup web-0b7c9a52 \(uid vb-before\) for it/);
    assert.ok(message.includes(`Machine web (uid ${UID})`), message);
  });

  it("the issue's forged backup (the Machine's name and uid, no volumes, Completed at once) releases nothing", () => {
    const forged = backup({
      phase: 'Completed',
      attempts: 0,
      volumes: [],
      conditions: [{ ...ready('BackupCompleted', 'all 0 volumes copied'), status: 'True' }],
    });
    forged.spec.volumes = [];
    forged.metadata.uid = 'forged-uid';
    for (const recorded of [undefined, RECORD]) {
      const plan = planMachine(deleting(), forged, recorded);
      assert.equal(plan.action, 'wait');
      assert.equal(waitReason(plan), 'BackupConflict');
    }
    // Even were it recorded as the operator's, it proves no copy of the Machine's volumes.
    const recordedForged = planMachine(deleting(), forged, { name: 'web-0b7c9a52', uid: 'forged-uid' });
    assert.equal(waitReason(recordedForged), 'BackupConflict');
    assert.match(
      waitMessage(recordedForged),
      /does not prove a copy of this Machine's volumes: it has no volume data/,
    );
  });

  const gaps: { what: string; edit: (b: VolumeBackup) => void; says: RegExp }[] = [
    {
      what: 'a volume of the Machine missing',
      edit: (b) => {
        b.spec.volumes = b.spec.volumes.filter((v) => v.name !== 'logs');
        b.status!.volumes = b.status!.volumes!.filter((v) => v.name !== 'logs');
      },
      says: /it has no volume logs/,
    },
    {
      what: 'another claim for a volume',
      edit: (b) => {
        b.spec.volumes[0]!.claimName = 'payroll-data';
      },
      says: /its volume data is claim payroll-data, the Machine's is web-data/,
    },
    {
      what: 'a volume the Machine does not report',
      edit: (b) => {
        b.spec.volumes.push({ name: 'cache', claimName: 'payroll-data' });
        b.status!.volumes!.push({
          name: 'cache',
          backupClaimName: 'web-0b7c9a52-cache',
          manifest: manifest(3),
        });
      },
      says: /it has volume cache, which the Machine does not report/,
    },
    {
      what: 'no manifest for a volume',
      edit: (b) => {
        delete b.status!.volumes![1]!.manifest;
      },
      says: /volume logs has no verified copy/,
    },
    {
      what: 'no status volumes at all',
      edit: (b) => {
        delete b.status!.volumes;
      },
      says: /volume data has no verified copy/,
    },
  ];
  for (const gap of gaps) {
    it(`a recorded, Completed backup with ${gap.what}: BackupConflict, not released`, () => {
      const found = verified();
      gap.edit(found);
      const plan = planMachine(deleting(), found, RECORD);
      assert.equal(plan.action, 'wait');
      assert.equal(waitReason(plan), 'BackupConflict');
      assert.match(waitMessage(plan), /VolumeBackup web-0b7c9a52 completed but does not prove a copy/);
      assert.match(waitMessage(plan), gap.says);
    });
  }

  it('a recorded, Completed backup that can no longer be restored from (a backup claim being deleted): kept, saying why', () => {
    const b = verified();
    b.status!.conditions = [
      b.status!.conditions![0]!,
      {
        ...ready(
          'BackupClaimDeleting',
          'backup claim web-0b7c9a52-data of volume data was asked to be deleted',
        ),
        type: 'Restorable',
      },
    ];
    const plan = planMachine(deleting(), b, RECORD);
    assert.equal(plan.action, 'wait');
    assert.match(
      plan.action === 'wait' ? plan.condition.message : '',
      /backup claim web-0b7c9a52-data of volume data was asked to be deleted/,
    );
  });

  it('a recorded backup whose volumes differ only in order still releases', () => {
    const found = verified();
    found.spec.volumes.reverse();
    found.status!.volumes!.reverse();
    assert.equal(planMachine(deleting(), found, RECORD).action, 'remove-finalizer');
  });

  it('a recorded backup that was deleted: made again once the Machine is Stopped', () => {
    const plan = planMachine(deleting(), undefined, RECORD);
    assert.equal(plan.action, 'create-backup');
    assert.equal(plan.action === 'create-backup' && plan.backup.metadata.name, 'web-0b7c9a52');
    assert.equal(
      waitReason(planMachine(deleting({ phase: 'Stopping' }), undefined, RECORD)),
      'BackupPending',
    );
  });

  it("the skip annotation with a VolumeBackup that is not the operator's: released (BackupSkipped)", () => {
    for (const [found, recorded] of [
      [verified(), undefined],
      [withStatus({ phase: 'Running' }), { name: 'web-0b7c9a52', uid: 'vb-before' }],
    ] as const) {
      const plan = planMachine(deleting({ annotations: SKIP }), found, recorded);
      assert.equal(plan.action, 'remove-finalizer');
      if (plan.action !== 'remove-finalizer') return;
      assert.equal(plan.reason, 'BackupSkipped');
      assert.match(plan.message, /VolumeBackup web-0b7c9a52 is not this Machine's backup/);
      assert.equal(plan.condition?.reason, 'BackupSkipped');
    }
    const gap = verified();
    delete gap.status!.volumes;
    const plan = planMachine(deleting({ annotations: SKIP }), gap, RECORD);
    assert.equal(plan.action === 'remove-finalizer' && plan.reason, 'BackupSkipped');
  });
});
