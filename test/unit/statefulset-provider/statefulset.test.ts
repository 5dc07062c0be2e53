// The StatefulSet, restore claim and restore Job a StatefulSetMachine is realized as (pure).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  bounded,
  claimName,
  MACHINE_LABEL,
  providerID,
  restoreJobName,
} from '../../../examples/statefulset-provider/src/names.ts';
import { desiredRestoreJob, restoreProbePod } from '../../../examples/statefulset-provider/src/restore.ts';
import {
  desiredRestoreClaim,
  desiredStatefulSet,
} from '../../../examples/statefulset-provider/src/statefulset.ts';
import { MOVER_COMMAND } from '../../../src/apis/index.ts';
import { restrictedViolations } from '../../support/pod-security.ts';
import { machine, RESTORING } from './fixtures.ts';

describe('desiredStatefulSet', () => {
  const m = machine({ command: ['sleep'], args: ['infinity'] });
  const set = desiredStatefulSet(m, 1);

  it('is one replica, controlled by the StatefulSetMachine, with no Service', () => {
    assert.equal(set.metadata?.name, 'db');
    assert.equal(set.spec?.replicas, 1);
    assert.equal(set.spec?.serviceName, undefined);
    assert.deepEqual(set.metadata?.ownerReferences, [
      {
        apiVersion: 'examples.basicoperator.dev/v1alpha1',
        kind: 'StatefulSetMachine',
        name: 'db',
        uid: m.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.equal(desiredStatefulSet(m, 0).spec?.replicas, 0);
  });

  it('keeps the claims on a scale-down and lets them go with the StatefulSet', () => {
    assert.deepEqual(set.spec?.persistentVolumeClaimRetentionPolicy, {
      whenDeleted: 'Delete',
      whenScaled: 'Retain',
    });
  });

  it('selects its pod by the machine label, which the pod, the claims and the set all carry', () => {
    assert.deepEqual(set.spec?.selector.matchLabels, { [MACHINE_LABEL]: 'db' });
    assert.equal(set.spec?.template.metadata?.labels?.[MACHINE_LABEL], 'db');
    assert.equal(set.metadata?.labels?.[MACHINE_LABEL], 'db');
    for (const t of set.spec?.volumeClaimTemplates ?? [])
      assert.equal(t.metadata?.labels?.[MACHINE_LABEL], 'db');
  });

  it('runs the image with its command and args, mounting one claim template per volume', () => {
    const container = set.spec?.template.spec?.containers[0];
    assert.equal(container?.image, 'app:1');
    assert.deepEqual(container?.command, ['sleep']);
    assert.deepEqual(container?.args, ['infinity']);
    assert.deepEqual(container?.volumeMounts, [
      { name: 'data', mountPath: '/data' },
      { name: 'logs', mountPath: '/logs' },
    ]);
    assert.equal(set.spec?.template.spec?.volumes, undefined);
    assert.deepEqual(
      set.spec?.volumeClaimTemplates?.map((t) => [t.metadata?.name, t.spec]),
      [
        ['data', { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } }],
        [
          'logs',
          {
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: '1048576' } },
            storageClassName: 'fast',
          },
        ],
      ],
    );
  });
});

describe('restore claim and Job', () => {
  const m = machine(RESTORING);
  const volume = m.spec.volumes?.[0];
  assert.ok(volume);

  it('makes the claim kube-controller-manager would make, but controlled by the StatefulSetMachine', () => {
    const claim = desiredRestoreClaim(m, volume);
    const template = desiredStatefulSet(m, 1).spec?.volumeClaimTemplates?.[0];
    assert.equal(claim.metadata?.name, 'data-db-0');
    assert.deepEqual(claim.spec, template?.spec);
    assert.deepEqual(claim.metadata?.labels, template?.metadata?.labels);
    assert.equal(claim.metadata?.ownerReferences?.[0]?.uid, m.metadata.uid);
  });

  it("copies the backup claim into it with the project's volume-copy pod (the mover, expecting the backup's manifest), within a deadline", () => {
    const manifest = { files: 3, bytes: 4096, digest: `sha256:${'a'.repeat(64)}` };
    const job = desiredRestoreJob(m, volume, {
      backupClaimName: 'old-data',
      image: 'basic-operator:dev',
      activeDeadlineSeconds: 600,
      privilege: { mode: 'root' },
      expect: manifest,
    });
    assert.equal(job.metadata?.name, 'db-data-restore');
    assert.equal(job.spec?.activeDeadlineSeconds, 600);
    const container = job.spec?.template.spec?.containers[0];
    assert.deepEqual(container?.command, [...MOVER_COMMAND]);
    assert.deepEqual(container?.args?.slice(-2), ['--expect', `3:4096:${manifest.digest}`]);
    assert.equal(job.spec?.template.spec?.securityContext?.runAsUser, 0);
    assert.deepEqual(
      job.spec?.template.spec?.volumes?.map((v) => v.persistentVolumeClaim?.claimName),
      ['old-data', 'data-db-0'],
    );
    assert.equal(job.metadata?.labels?.['examples.basicoperator.dev/role'], 'restore');
    assert.equal(
      job.spec?.template.metadata?.labels?.['infra.basicoperator.dev/role'],
      'restore',
      'marked as a copy pod of the project',
    );
    assert.equal(
      job.spec?.template.metadata?.labels?.[MACHINE_LABEL],
      'db',
      'in the cache, and wakes the machine',
    );
  });

  it('runs as non-root where Pod Security refuses root (the probe asks), passing the profile', () => {
    const copy = { backupClaimName: 'old-data', image: 'basic-operator:dev', activeDeadlineSeconds: 600 };
    const job = desiredRestoreJob(m, volume, {
      ...copy,
      privilege: { mode: 'nonroot', uid: 65532, gid: 65532, level: 'restricted' },
    });
    const spec = job.spec?.template.spec;
    assert.deepEqual(spec?.containers[0]?.args?.slice(-2), ['--pod-security-level', 'restricted']);
    assert.deepEqual(restrictedViolations(spec!), []);
    const probe = restoreProbePod(m, volume, copy);
    assert.equal(probe.metadata?.generateName, 'db-data-restore-');
    assert.deepEqual(
      probe.spec,
      desiredRestoreJob(m, volume, { ...copy, privilege: { mode: 'root' } }).spec?.template.spec,
    );
  });
});

describe('names', () => {
  it('are those kube-controller-manager gives: <volume>-<name>-0', () => {
    assert.equal(claimName(machine(), { name: 'data' }), 'data-db-0');
    assert.equal(providerID(machine()), 'statefulset://ns/db');
  });

  it('bounds a restore Job name to 63 characters, uniquely', () => {
    const long = machine({}, 'a'.repeat(52));
    const a = restoreJobName(long, { name: 'b'.repeat(63) });
    const b = restoreJobName(long, { name: `${'b'.repeat(62)}c` });
    assert.equal(a.length, 63);
    assert.notEqual(a, b);
    assert.equal(bounded('short', 63), 'short');
    assert.match(bounded(`${'x'.repeat(60)}----y`, 63), /^x+-[0-9a-f]{8}$/);
  });
});
