import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MOVER_COMMAND, VOLUME_COPY_USER } from '../../../src/apis/index.ts';
import { desiredBackupClaim, desiredCopyJob } from '../../../src/controllers/volumebackup/logic/children.ts';
import { restrictedViolations } from '../../support/pod-security.ts';
import { backup } from './fixtures.ts';

const ROOT = { mode: 'root' } as const;
const NONROOT = {
  mode: 'nonroot',
  uid: VOLUME_COPY_USER,
  gid: VOLUME_COPY_USER,
  level: 'restricted',
} as const;

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

  it('is held by the backup-claim finalizer while its VolumeBackup exists', () => {
    const claim = desiredBackupClaim(backup(), 'data', { spec: {} });
    assert.deepEqual(claim.metadata?.finalizers, ['infra.basicoperator.dev/backup-claim']);
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
  const job = (privilege: typeof ROOT | typeof NONROOT = ROOT) =>
    desiredCopyJob(
      backup(),
      'data',
      { image: 'registry.example/copy:1', sourceClaim: 'web-data', attempt: 2, privilege },
      600,
    );

  it('runs the mover from the source claim (read-only) into the backup claim, once, with the given image', () => {
    const copy = job();
    assert.equal(copy.metadata?.name, 'web-0b7c9a52-data-2');
    assert.equal(copy.metadata?.labels?.['infra.basicoperator.dev/attempt'], '2');
    assert.equal(copy.metadata?.labels?.['infra.basicoperator.dev/volume'], 'data');
    assert.equal(copy.metadata?.labels?.['infra.basicoperator.dev/role'], 'backup');
    assert.equal(copy.metadata?.ownerReferences?.[0]?.uid, 'vb-uid');
    assert.equal(copy.spec?.backoffLimit, 0, 'the controller retries, not the Job');
    assert.equal(copy.spec?.activeDeadlineSeconds, 600, 'a copy that cannot run or hangs ends');
    const pod = copy.spec?.template.spec;
    assert.equal(pod?.restartPolicy, 'Never');
    const container = pod?.containers[0];
    assert.equal(container?.name, 'copy');
    assert.equal(container?.image, 'registry.example/copy:1');
    assert.deepEqual(container?.command, MOVER_COMMAND);
    assert.deepEqual(container?.args, ['copy', '--source', '/source', '--target', '/target']);
    assert.ok(!container?.command?.includes('sh'), 'no shell: the mover copies and proves the copy');
    assert.equal(
      container?.terminationMessagePolicy,
      'FallbackToLogsOnError',
      'a copy that could not report leaves its last log lines',
    );
    assert.deepEqual(pod?.volumes, [
      { name: 'source', persistentVolumeClaim: { claimName: 'web-data', readOnly: true } },
      { name: 'target', persistentVolumeClaim: { claimName: 'web-0b7c9a52-data' } },
    ]);
    assert.equal(copy.spec?.template.metadata?.labels?.['app.kubernetes.io/managed-by'], 'basic-operator');
  });

  it('as root: keeps owners with only the capabilities a copy needs, and no fsGroup', () => {
    const pod = job(ROOT).spec?.template.spec;
    assert.equal(pod?.securityContext?.runAsUser, 0);
    assert.equal(pod?.securityContext?.runAsNonRoot, false);
    assert.equal(pod?.securityContext?.fsGroup, undefined, 'root writes any target root without one');
    assert.deepEqual(pod?.containers[0]?.securityContext?.capabilities, {
      drop: ['ALL'],
      add: ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID'],
    });
    assert.equal(pod?.containers[0]?.securityContext?.allowPrivilegeEscalation, false);
    assert.ok(restrictedViolations(pod!).length > 0, 'root is not what the restricted profile admits');
  });

  it('mounts no API token and no service links into the copy pod, as root or not: the mover only copies files', () => {
    for (const privilege of [ROOT, NONROOT]) {
      const pod = job(privilege).spec?.template.spec;
      assert.equal(pod?.automountServiceAccountToken, false);
      assert.equal(pod?.enableServiceLinks, false);
    }
  });

  it('as non-root: meets the Pod Security restricted profile and tells the mover the level', () => {
    const pod = job(NONROOT).spec?.template.spec;
    assert.deepEqual(restrictedViolations(pod!), []);
    assert.equal(pod?.securityContext?.runAsNonRoot, true);
    assert.equal(pod?.securityContext?.runAsUser, VOLUME_COPY_USER);
    assert.equal(pod?.securityContext?.fsGroup, undefined);
    assert.deepEqual(pod?.containers[0]?.securityContext?.capabilities, { drop: ['ALL'] });
    assert.deepEqual(pod?.containers[0]?.args?.slice(-2), ['--pod-security-level', 'restricted']);
  });
});
