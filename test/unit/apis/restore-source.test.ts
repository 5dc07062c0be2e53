import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { restoreSource, VOLUME_BACKUP, type VolumeBackup } from '../../../src/apis/index.ts';

const source = { volumeBackup: 'web-1a2b3c4d', volume: 'data' };
const backup = (status: VolumeBackup['status']): VolumeBackup => ({
  apiVersion: VOLUME_BACKUP.apiVersion,
  kind: VOLUME_BACKUP.kind,
  metadata: { name: 'web-1a2b3c4d', namespace: 'ns' },
  spec: { machineName: 'web', machineUID: 'u', volumes: [{ name: 'data', claimName: 'web-data' }] },
  status,
});

describe('restoreSource: what a VolumeBackup offers a provider restoring a volume', () => {
  it('waits for a missing or unfinished backup, fails on a failed one or a missing volume, else copies', () => {
    assert.equal(restoreSource('v', source, undefined).kind, 'waiting');
    assert.deepEqual(restoreSource('v', source, backup({ phase: 'Running' })), {
      kind: 'waiting',
      reason: 'WaitingForBackup',
      message: 'v, which is Running; waiting for it to complete',
    });
    assert.equal(restoreSource('v', source, backup({ phase: 'Failed' })).kind, 'failed');
    const other = restoreSource('v', source, backup({ phase: 'Completed', volumes: [] }));
    assert.equal(other.kind === 'failed' && other.reason, 'BackupVolumeNotFound');
    assert.deepEqual(
      restoreSource(
        'v',
        source,
        backup({ phase: 'Completed', volumes: [{ name: 'data', backupClaimName: 'b' }] }),
      ),
      { kind: 'ready', backupClaimName: 'b' },
    );
  });
});
