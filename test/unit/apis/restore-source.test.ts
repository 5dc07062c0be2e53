import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import {
  restoreSource,
  VOLUME_BACKUP,
  type VolumeBackup,
  type VolumeManifest,
} from '../../../src/apis/index.ts';

const source = { volumeBackup: 'web-1a2b3c4d', volume: 'data' };
const backup = (status: VolumeBackup['status']): VolumeBackup => ({
  apiVersion: VOLUME_BACKUP.apiVersion,
  kind: VOLUME_BACKUP.kind,
  metadata: { name: 'web-1a2b3c4d', namespace: 'ns' },
  spec: { machineName: 'web', machineUID: 'u', volumes: [{ name: 'data', claimName: 'web-data' }] },
  status,
});
const manifest: VolumeManifest = { files: 3, bytes: 4096, digest: `sha256:${'ab'.repeat(32)}` };
const completed = (withManifest: boolean) =>
  backup({
    phase: 'Completed',
    volumes: [{ name: 'data', backupClaimName: 'b', ...(withManifest ? { manifest } : {}) }],
  });

/** The backup claim `b` as a lookup finds it (undefined: it does not exist). */
const claims =
  (claim?: V1PersistentVolumeClaim) =>
  (name: string): V1PersistentVolumeClaim | undefined =>
    name === 'b' ? claim : undefined;
const bound: V1PersistentVolumeClaim = { metadata: { name: 'b' }, status: { phase: 'Bound' } };
const noClaim = claims();

describe('restoreSource: what a VolumeBackup offers a provider restoring a volume', () => {
  it('waits for a missing or unfinished backup, fails on a failed one or a missing volume', () => {
    assert.equal(restoreSource('v', source, undefined, noClaim).kind, 'waiting');
    assert.deepEqual(restoreSource('v', source, backup({ phase: 'Running' }), noClaim), {
      kind: 'waiting',
      reason: 'WaitingForBackup',
      message: 'v, which is Running; waiting for it to complete',
    });
    assert.equal(restoreSource('v', source, backup({ phase: 'Failed' }), noClaim).kind, 'failed');
    const other = restoreSource('v', source, backup({ phase: 'Completed', volumes: [] }), noClaim);
    assert.equal(other.kind === 'failed' && other.reason, 'BackupVolumeNotFound');
  });

  it("copies from a Bound backup claim, with the volume's verified manifest to check the restore against", () => {
    assert.deepEqual(restoreSource('v', source, completed(true), claims(bound)), {
      kind: 'ready',
      backupClaimName: 'b',
      manifest,
    });
  });

  it('a backup recorded before copies were verified offers no manifest', () => {
    assert.deepEqual(restoreSource('v', source, completed(false), claims(bound)), {
      kind: 'ready',
      backupClaimName: 'b',
    });
  });

  const lost: { what: string; claim: V1PersistentVolumeClaim | undefined; says: string }[] = [
    { what: 'missing', claim: undefined, says: 'does not exist' },
    {
      what: 'being deleted',
      claim: { ...bound, metadata: { name: 'b', deletionTimestamp: new Date('2026-01-01T00:00:00Z') } },
      says: 'is being deleted',
    },
    {
      what: 'Pending',
      claim: { metadata: { name: 'b' }, status: { phase: 'Pending' } },
      says: 'is Pending, not Bound',
    },
    {
      what: 'Lost',
      claim: { metadata: { name: 'b' }, status: { phase: 'Lost' } },
      says: 'is Lost, not Bound',
    },
    { what: 'without a phase', claim: { metadata: { name: 'b' } }, says: 'is Pending, not Bound' },
  ];
  for (const l of lost) {
    it(`a backup claim ${l.what}: fails at once with BackupClaimLost, naming the claim`, () => {
      assert.deepEqual(restoreSource('v', source, completed(true), claims(l.claim)), {
        kind: 'failed',
        reason: 'BackupClaimLost',
        message: `v, whose backup claim b of volume data ${l.says}; nothing can be restored from it`,
      });
    });
  }

  it('looks the backup claim up only once the backup offers the volume', () => {
    const asked: string[] = [];
    const lookup = (name: string) => {
      asked.push(name);
      return bound;
    };
    restoreSource('v', source, undefined, lookup);
    restoreSource('v', source, backup({ phase: 'Running' }), lookup);
    restoreSource('v', source, backup({ phase: 'Completed', volumes: [] }), lookup);
    assert.deepEqual(asked, []);
    restoreSource('v', source, completed(true), lookup);
    assert.deepEqual(asked, ['b']);
  });
});
