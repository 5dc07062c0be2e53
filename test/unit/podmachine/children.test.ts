import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VOLUME_COPY_COMMAND } from '../../../src/apis/index.ts';
import {
  desiredClaim,
  desiredPod,
  desiredRestoreJob,
  storageRequest,
} from '../../../src/controllers/podmachine/children.ts';
import {
  boundedName,
  claimName,
  podMachineLabels,
  podName,
  restoreJobName,
} from '../../../src/controllers/podmachine/names.ts';
import { restrictedViolations } from '../../support/pod-security.ts';
import { podMachine } from './fixtures.ts';

const LABELS = {
  'app.kubernetes.io/managed-by': 'basic-operator',
  'infra.basicoperator.dev/podmachine': 'web',
};
const CONTROLLER = {
  apiVersion: 'infra.basicoperator.dev/v1alpha1',
  kind: 'PodMachine',
  name: 'web',
  uid: '0b7c9a52-1111-2222-3333-444455556666',
  controller: true,
  blockOwnerDeletion: true,
};

describe('names', () => {
  it("names the pod after the PodMachine, each claim and restore Job after it and the volume (an inline Machine's names)", () => {
    const pm = podMachine();
    assert.equal(podName(pm), 'web');
    assert.equal(claimName(pm, { name: 'data' }), 'web-data');
    assert.equal(restoreJobName(pm, { name: 'data' }), 'web-data-restore');
  });

  it('keeps restore Job names and label values within 63 characters, claim names within 253', () => {
    const pm = podMachine({}, { name: 'm'.repeat(200) });
    assert.ok(restoreJobName(pm, { name: 'data' }).length <= 63);
    assert.ok(podMachineLabels(pm)['infra.basicoperator.dev/podmachine']!.length <= 63);
    assert.equal(claimName(pm, { name: 'data' }), `${'m'.repeat(200)}-data`);
    assert.equal(claimName(podMachine({}, { name: 'm'.repeat(250) }), { name: 'data' }).length, 253);
  });

  it('shortens with a hash, deterministically, never leaving a dash or dot before it', () => {
    const a = boundedName(`${'a'.repeat(70)}-data`, 63);
    assert.match(a, /^a+-[0-9a-f]{8}$/);
    assert.equal(a.length, 63);
    assert.notEqual(a, boundedName(`${'a'.repeat(70)}-logs`, 63));
    assert.match(boundedName(`${'a'.repeat(53)}.-bcdefghijklmnop`, 63), /^a{53}-[0-9a-f]{8}$/);
  });
});

describe('desiredClaim', () => {
  it('asks for the size and class, labelled and controlled by the PodMachine', () => {
    const pm = podMachine();
    const [data, logs] = pm.spec.volumes!;
    const claim = desiredClaim(pm, data!);
    assert.equal(claim.metadata?.name, 'web-data');
    assert.deepEqual(claim.spec?.resources?.requests, { storage: '1Gi' });
    assert.equal(claim.spec?.storageClassName, undefined, 'the default class when none is given');
    assert.deepEqual(claim.spec?.accessModes, ['ReadWriteOnce']);
    assert.deepEqual(claim.metadata?.labels, { ...LABELS, 'infra.basicoperator.dev/volume': 'data' });
    assert.deepEqual(claim.metadata?.ownerReferences, [CONTROLLER]);
    assert.equal(desiredClaim(pm, logs!).spec?.storageClassName, 'fast');
  });

  it('turns a size in bytes into a quantity', () => {
    assert.equal(storageRequest(1048576), '1048576');
    assert.equal(storageRequest('2Gi'), '2Gi');
  });
});

describe('desiredPod', () => {
  it('mounts every claim at its path and runs the image with command and args in container machine', () => {
    const pod = desiredPod(podMachine({ command: ['serve'], args: ['--port', '80'] }));
    assert.equal(pod.metadata?.name, 'web');
    assert.deepEqual(pod.metadata?.labels, LABELS);
    assert.deepEqual(pod.metadata?.ownerReferences, [CONTROLLER]);
    assert.equal(pod.spec?.containers.length, 1);
    const container = pod.spec?.containers[0];
    assert.equal(container?.name, 'machine');
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
    const container = desiredPod(podMachine()).spec?.containers[0];
    assert.equal(container?.command, undefined);
    assert.equal(container?.args, undefined);
  });
});

describe('desiredRestoreJob', () => {
  it('copies the backup claim (read-only) into the claim, with the configured image and deadline', () => {
    const pm = podMachine();
    const job = desiredRestoreJob(pm, pm.spec.volumes![0]!, 'old-1234abcd-data', 'busybox:1.36', 3600);
    assert.equal(job.metadata?.name, 'web-data-restore');
    assert.deepEqual(job.metadata?.labels, {
      ...LABELS,
      'infra.basicoperator.dev/volume': 'data',
      'infra.basicoperator.dev/role': 'restore',
    });
    assert.deepEqual(job.metadata?.ownerReferences, [CONTROLLER]);
    const spec = job.spec?.template.spec;
    assert.equal(spec?.restartPolicy, 'Never');
    assert.equal(spec?.containers[0]?.image, 'busybox:1.36');
    assert.deepEqual(spec?.containers[0]?.command, VOLUME_COPY_COMMAND);
    assert.deepEqual(spec?.volumes, [
      { name: 'source', persistentVolumeClaim: { claimName: 'old-1234abcd-data', readOnly: true } },
      { name: 'target', persistentVolumeClaim: { claimName: 'web-data' } },
    ]);
    assert.equal(job.spec?.backoffLimit, 3);
    assert.equal(job.spec?.activeDeadlineSeconds, 3600, 'a restore that cannot run or hangs ends');
    assert.deepEqual(restrictedViolations(job.spec!.template.spec!), []);
  });
});
