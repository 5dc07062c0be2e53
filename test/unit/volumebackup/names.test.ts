import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backupLabels } from '../../../src/controllers/machinebackup/names.ts';
import { backupName, skipRequested } from '../../../src/controllers/shared/volume-backups.ts';
import { backupClaimName, copyJobName } from '../../../src/controllers/volumebackup/names.ts';
import { backup, machine } from './fixtures.ts';

describe('backupName', () => {
  it('is the Machine name plus the first 8 hex digits of its uid', () => {
    assert.equal(backupName(machine()), 'web-0b7c9a52');
  });

  it('differs for a new Machine of the same name and is stable for the same one', () => {
    const again = machine({}, { uid: 'ffffffff-1111-2222-3333-444455556666' });
    assert.equal(backupName(again), 'web-ffffffff');
    assert.equal(backupName(machine()), backupName(machine()));
  });

  it('keeps the uid part when the Machine name is at the length limit', () => {
    const long = machine({}, { name: `${'a'.repeat(250)}` });
    const name = backupName(long);
    assert.equal(name.length, 253);
    assert.ok(name.endsWith('-0b7c9a52'));
  });
});

describe('child names', () => {
  it('names backup claims and copy Jobs after the backup, volume and attempt', () => {
    assert.equal(backupClaimName(backup(), 'data'), 'web-0b7c9a52-data');
    assert.equal(copyJobName(backup(), 'data', 2), 'web-0b7c9a52-data-2');
  });

  it('bounds Job names to 63 characters and keeps attempts apart', () => {
    const long = { metadata: { name: 'b'.repeat(100) } };
    const first = copyJobName(long, 'data', 1);
    assert.ok(first.length <= 63);
    assert.notEqual(first, copyJobName(long, 'data', 2));
  });
});

describe('labels and annotations', () => {
  it('labels a VolumeBackup with the Machine name and uid', () => {
    assert.deepEqual(backupLabels(machine()), {
      'app.kubernetes.io/managed-by': 'basic-operator',
      'infra.basicoperator.dev/machine': 'web',
      'infra.basicoperator.dev/machine-uid': '0b7c9a52-1111-2222-3333-444455556666',
    });
  });

  it('reads the skip annotation only when it is exactly "true"', () => {
    const annotated = (value: string) =>
      machine({}, { annotations: { 'infra.basicoperator.dev/skip-backup': value } });
    assert.equal(skipRequested(annotated('true')), true);
    assert.equal(skipRequested(annotated('yes')), false);
    assert.equal(skipRequested(machine()), false);
  });
});
