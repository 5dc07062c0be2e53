import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VOLUME_COPY_COMMAND } from '../../../src/apis/index.ts';
import {
  desiredClaim,
  desiredPod,
  desiredRestoreJob,
  storageRequest,
} from '../../../src/controllers/machine/children.ts';
import { restrictedViolations } from '../../support/pod-security.ts';
import { machine } from './fixtures.ts';

const MANAGED = { 'app.kubernetes.io/managed-by': 'basic-operator' };

describe('desiredClaim', () => {
  it('asks for the size and class, labelled and controlled by the Machine', () => {
    const m = machine();
    const [data, logs] = m.spec.volumes!;
    const claim = desiredClaim(m, data!);
    assert.equal(claim.metadata?.name, 'web-data');
    assert.deepEqual(claim.spec?.resources?.requests, { storage: '1Gi' });
    assert.equal(claim.spec?.storageClassName, undefined, 'the default class when none is given');
    assert.deepEqual(claim.spec?.accessModes, ['ReadWriteOnce']);
    assert.equal(claim.metadata?.labels?.['app.kubernetes.io/managed-by'], 'basic-operator');
    assert.equal(claim.metadata?.labels?.['infra.basicoperator.dev/volume'], 'data');
    assert.deepEqual(claim.metadata?.ownerReferences, [
      {
        apiVersion: 'infra.basicoperator.dev/v1alpha1',
        kind: 'Machine',
        name: 'web',
        uid: m.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.equal(desiredClaim(m, logs!).spec?.storageClassName, 'fast');
  });

  it('turns a size in bytes into a quantity', () => {
    assert.equal(storageRequest(1048576), '1048576');
    assert.equal(storageRequest('2Gi'), '2Gi');
  });
});

describe('desiredPod', () => {
  it('mounts every claim at its path and runs the image with command and args', () => {
    const pod = desiredPod(machine({ command: ['serve'], args: ['--port', '80'] }));
    assert.equal(pod.metadata?.name, 'web');
    assert.deepEqual(pod.metadata?.labels, { ...MANAGED, 'infra.basicoperator.dev/machine': 'web' });
    const container = pod.spec?.containers[0];
    assert.equal(container?.image, 'app:1');
    assert.deepEqual(container?.command, ['serve']);
    assert.deepEqual(container?.args, ['--port', '80']);
    assert.deepEqual(container?.volumeMounts, [
      { name: 'data', mountPath: '/data' },
      { name: 'logs', mountPath: '/logs' },
    ]);
    assert.deepEqual(pod.spec?.volumes, [
      { name: 'data', persistentVolumeClaim: { claimName: 'web-data' } },
      { name: 'logs', persistentVolumeClaim: { claimName: 'web-logs' } },
    ]);
    assert.equal(pod.spec?.restartPolicy, 'Always');
  });

  it('leaves command and args to the image when the spec has none', () => {
    const container = desiredPod(machine()).spec?.containers[0];
    assert.equal(container?.command, undefined);
    assert.equal(container?.args, undefined);
  });
});

describe('desiredRestoreJob', () => {
  it('copies the backup claim (read-only) into the claim, with the configured image', () => {
    const m = machine();
    const job = desiredRestoreJob(m, m.spec.volumes![0]!, 'old-1234abcd-data', 'busybox:1.36', 3600);
    assert.equal(job.metadata?.name, 'web-data-restore');
    assert.equal(job.metadata?.labels?.['infra.basicoperator.dev/role'], 'restore');
    assert.equal(job.metadata?.ownerReferences?.[0]?.uid, m.metadata.uid);
    const spec = job.spec?.template.spec;
    assert.equal(spec?.restartPolicy, 'Never');
    assert.equal(spec?.containers[0]?.image, 'busybox:1.36');
    assert.deepEqual(spec?.containers[0]?.command, VOLUME_COPY_COMMAND);
    assert.deepEqual(spec?.volumes, [
      { name: 'source', persistentVolumeClaim: { claimName: 'old-1234abcd-data', readOnly: true } },
      { name: 'target', persistentVolumeClaim: { claimName: 'web-data' } },
    ]);
    assert.equal(job.spec?.template.metadata?.labels?.['app.kubernetes.io/managed-by'], 'basic-operator');
    assert.equal(job.spec?.activeDeadlineSeconds, 3600, 'a restore that cannot run or hangs ends');
  });

  it('runs a pod that meets the Pod Security restricted profile', () => {
    const m = machine();
    const job = desiredRestoreJob(m, m.spec.volumes![0]!, 'old-1234abcd-data', 'busybox:1.36', 3600);
    assert.deepEqual(restrictedViolations(job.spec!.template.spec!), []);
  });
});
