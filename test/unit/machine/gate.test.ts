import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VOLUME_BACKUP_FINALIZER } from '../../../src/apis/index.ts';
import { backupFinalizerChanged, creationBlocked } from '../../../src/controllers/machine/gate.ts';
import { specOrDeletionChanged } from '../../../src/controllers/machine/index.ts';
import { machine } from './fixtures.ts';

const withFinalizer = (m = machine()) => ({
  ...m,
  metadata: { ...m.metadata, finalizers: ['example.com/other', VOLUME_BACKUP_FINALIZER] },
});

describe('creationBlocked', () => {
  it('holds an OnDelete Machine (the default) until it carries the backup finalizer', () => {
    assert.match(creationBlocked(machine()) ?? '', /infra\.basicoperator\.dev\/volume-backup/);
    assert.match(creationBlocked(machine({ backup: { policy: 'OnDelete' } })) ?? '', /OnDelete/);
    assert.equal(creationBlocked(withFinalizer()), undefined);
  });

  it('does not hold a Machine with policy None, or one being deleted', () => {
    assert.equal(creationBlocked(machine({ backup: { policy: 'None' } })), undefined);
    const deleting = machine();
    deleting.metadata.deletionTimestamp = new Date();
    assert.equal(creationBlocked(deleting), undefined);
  });
});

describe('the Machine predicate', () => {
  it("passes the backup finalizer's arrival and departure, not other finalizer edits", () => {
    const bare = machine();
    const other = { ...bare, metadata: { ...bare.metadata, finalizers: ['example.com/other'] } };
    assert.equal(backupFinalizerChanged(other, withFinalizer()), true);
    assert.equal(specOrDeletionChanged.update?.(other, withFinalizer()), true);
    assert.equal(specOrDeletionChanged.update?.(withFinalizer(), other), true);
    assert.equal(specOrDeletionChanged.update?.(bare, other), false);
  });
});
