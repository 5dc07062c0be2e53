import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MACHINE_FINALIZER, VOLUME_BACKUP_FINALIZER } from '../../../src/apis/index.ts';
import { machineChanged } from '../../../src/controllers/machine/index.ts';
import { creationBlocked } from '../../../src/controllers/machine/logic/gate.ts';
import { machine } from './fixtures.ts';

const withFinalizers = (...finalizers: string[]) => {
  const m = machine();
  return { ...m, metadata: { ...m.metadata, finalizers } };
};

describe('creationBlocked', () => {
  it('holds an OnDelete Machine (the default) until it carries the backup finalizer', () => {
    assert.match(creationBlocked(machine()) ?? '', /infra\.basicoperator\.dev\/volume-backup/);
    assert.match(creationBlocked(machine({ backup: { policy: 'OnDelete' } })) ?? '', /OnDelete/);
    assert.equal(creationBlocked(withFinalizers('example.com/other', VOLUME_BACKUP_FINALIZER)), undefined);
  });

  it('does not hold a Machine with policy None, or one being deleted', () => {
    assert.equal(creationBlocked(machine({ backup: { policy: 'None' } })), undefined);
    const deleting = machine();
    deleting.metadata.deletionTimestamp = new Date();
    assert.equal(creationBlocked(deleting), undefined);
  });
});

describe('the Machine predicate', () => {
  it('passes every change of finalizers: creation waits for one, deletion for the others to go', () => {
    const bare = machine();
    assert.equal(machineChanged.update?.(bare, withFinalizers(VOLUME_BACKUP_FINALIZER)), true);
    assert.equal(
      machineChanged.update?.(
        withFinalizers(MACHINE_FINALIZER, 'example.com/other'),
        withFinalizers(MACHINE_FINALIZER),
      ),
      true,
    );
  });

  it('passes a spec change and the start of deletion, not a status or label change', () => {
    const bare = machine();
    assert.equal(
      machineChanged.update?.(bare, { ...bare, metadata: { ...bare.metadata, generation: 4 } }),
      true,
    );
    assert.equal(
      machineChanged.update?.(bare, {
        ...bare,
        metadata: { ...bare.metadata, deletionTimestamp: new Date() },
      }),
      true,
    );
    assert.equal(
      machineChanged.update?.(bare, { ...bare, metadata: { ...bare.metadata, resourceVersion: '9' } }),
      false,
    );
    assert.equal(
      machineChanged.update?.(bare, { ...bare, metadata: { ...bare.metadata, labels: { a: 'b' } } }),
      false,
    );
  });
});
