import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VOLUME_COPY_COMMAND } from '../../../src/apis/index.ts';
import { desiredBackupClaim, desiredCopyJob } from '../../../src/controllers/volumebackup/children.ts';
import { restrictedViolations } from '../../support/pod-security.ts';
import { backup } from './fixtures.ts';

describe('desiredBackupClaim', () => {
  it('is as big as the source claim, of its class, and owned by the VolumeBackup', () => {
    const claim = desiredBackupClaim(backup(), 'data', {
      spec: { storageClassName: 'fast', resources: { requests: { storage: '5Gi' } } },
    });
    assert.equal(claim.metadata?.name, 'web-0b7c9a52-data');
    assert.deepEqual(claim.spec?.resources?.requests, { storage: '5Gi' });
    assert.equal(claim.spec?.storageClassName, 'fast');
    assert.deepEqual(claim.metadata?.ownerReferences, [
      {
        apiVersion: 'infra.basicoperator.dev/v1alpha1',
        kind: 'VolumeBackup',
        name: 'web-0b7c9a52',
        uid: 'vb-uid',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.equal(claim.metadata?.labels?.['app.kubernetes.io/managed-by'], 'basic-operator');
  });
});

describe('desiredBackupClaim size', () => {
  it("takes the source claim's provisioned capacity, which may exceed its request", () => {
    const claim = desiredBackupClaim(backup(), 'data', {
      spec: { resources: { requests: { storage: '1Gi' } } },
      status: { phase: 'Bound', capacity: { storage: '10Gi' } },
    });
    assert.deepEqual(claim.spec?.resources?.requests, { storage: '10Gi' });
  });

  it('falls back to the request while the claim reports no capacity', () => {
    const claim = desiredBackupClaim(backup(), 'data', {
      spec: { resources: { requests: { storage: '2Gi' } } },
      status: { phase: 'Pending' },
    });
    assert.deepEqual(claim.spec?.resources?.requests, { storage: '2Gi' });
  });
});

describe('desiredCopyJob', () => {
  it('copies the source claim (read-only) into the backup claim, once, with the given image', () => {
    const job = desiredCopyJob(backup(), 'data', 'web-data', 2, 'registry.example/copy:1', 600);
    assert.equal(job.metadata?.name, 'web-0b7c9a52-data-2');
    assert.equal(job.metadata?.labels?.['infra.basicoperator.dev/attempt'], '2');
    assert.equal(job.metadata?.labels?.['infra.basicoperator.dev/volume'], 'data');
    assert.equal(job.metadata?.ownerReferences?.[0]?.uid, 'vb-uid');
    assert.equal(job.spec?.backoffLimit, 0, 'the controller retries, not the Job');
    assert.equal(job.spec?.activeDeadlineSeconds, 600, 'a copy that cannot run or hangs ends');
    const pod = job.spec?.template.spec;
    assert.equal(pod?.restartPolicy, 'Never');
    assert.equal(pod?.containers[0]?.image, 'registry.example/copy:1');
    assert.deepEqual(pod?.containers[0]?.command, VOLUME_COPY_COMMAND);
    assert.deepEqual(pod?.volumes, [
      { name: 'source', persistentVolumeClaim: { claimName: 'web-data', readOnly: true } },
      { name: 'target', persistentVolumeClaim: { claimName: 'web-0b7c9a52-data' } },
    ]);
    assert.equal(job.spec?.template.metadata?.labels?.['app.kubernetes.io/managed-by'], 'basic-operator');
  });

  it('runs a pod that meets the Pod Security restricted profile', () => {
    const job = desiredCopyJob(backup(), 'data', 'web-data', 1, 'busybox:1.36', 600);
    assert.deepEqual(restrictedViolations(job.spec!.template.spec!), []);
  });
});
