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
  templatePod,
} from '../../../examples/statefulset-provider/src/statefulset.ts';
import { type MachinePodFields, MOVER_COMMAND } from '../../../src/apis/index.ts';
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

describe("the pod template: a PodMachine's pod fields, restricted by default", () => {
  it('passes Pod Security restricted with no security fields, as 65532, and mounts no API token', () => {
    const spec = desiredStatefulSet(machine(), 1).spec?.template.spec;
    assert.ok(spec);
    assert.deepEqual(restrictedViolations(spec), []);
    assert.deepEqual(spec.securityContext, {
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      fsGroup: 65532,
      fsGroupChangePolicy: 'OnRootMismatch',
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(spec.containers[0]?.securityContext, {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    assert.equal(spec.automountServiceAccountToken, false);
    assert.equal(spec.serviceAccountName, undefined);
  });

  it('carries every pod field where a StatefulSet has it: the container, or the pod', () => {
    const probe = { exec: { command: ['pg_isready'] }, periodSeconds: 5 };
    const fields: MachinePodFields = {
      env: [
        { name: 'PGDATA', value: '/data/pg' },
        { name: 'POSTGRES_PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
      ],
      envFrom: [{ configMapRef: { name: 'db-settings' } }],
      resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '512Mi' } },
      ports: [{ name: 'pg', containerPort: 5432 }],
      readinessProbe: probe,
      livenessProbe: { tcpSocket: { port: 'pg' } },
      startupProbe: { exec: { command: ['true'] }, failureThreshold: 30 },
      securityContext: { readOnlyRootFilesystem: true },
      podSecurityContext: { runAsUser: 999, runAsGroup: 999, fsGroup: 999 },
      serviceAccountName: 'db',
      automountServiceAccountToken: true,
      nodeSelector: { disk: 'ssd' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' }],
      affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] } },
    };
    const m = machine(structuredClone(fields));
    const spec = desiredStatefulSet(m, 1).spec?.template.spec;
    const container = spec?.containers[0];
    assert.deepEqual(container?.env, fields.env);
    assert.deepEqual(container?.envFrom, fields.envFrom);
    assert.deepEqual(container?.resources, fields.resources);
    assert.deepEqual(container?.ports, fields.ports);
    assert.deepEqual(container?.readinessProbe, fields.readinessProbe);
    assert.deepEqual(container?.livenessProbe, fields.livenessProbe);
    assert.deepEqual(container?.startupProbe, fields.startupProbe);
    // The user's fields over the defaults, field by field.
    assert.deepEqual(container?.securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    assert.deepEqual(spec?.securityContext, {
      runAsNonRoot: true,
      runAsUser: 999,
      runAsGroup: 999,
      fsGroup: 999,
      fsGroupChangePolicy: 'OnRootMismatch',
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.equal(spec?.serviceAccountName, 'db');
    assert.equal(spec?.automountServiceAccountToken, true);
    assert.deepEqual(spec?.nodeSelector, fields.nodeSelector);
    assert.deepEqual(spec?.tolerations, fields.tolerations);
    assert.deepEqual(spec?.affinity, fields.affinity);
    assert.deepEqual(restrictedViolations(spec!), []);
    // Copies: the StatefulSet never shares the spec's objects.
    assert.notEqual(container?.env, m.spec.env);
  });

  it('asks for what the user wrote: a privileged container keeps no allowPrivilegeEscalation default', () => {
    const spec = desiredStatefulSet(machine({ securityContext: { privileged: true } }), 1).spec?.template
      .spec;
    assert.ok(restrictedViolations(spec!).length > 0);
    assert.equal(spec?.containers[0]?.securityContext?.privileged, true);
  });

  it("is what the dry run asks admission about: the pod kube-controller-manager would make, with its claims' volumes", () => {
    const m = machine({ podSecurityContext: { runAsUser: 999 } });
    const set = desiredStatefulSet(m, 1);
    const pod = templatePod(m, set);
    assert.equal(pod.metadata?.name, 'db-0');
    assert.equal(pod.metadata?.namespace, 'ns');
    assert.deepEqual(pod.metadata?.labels, set.spec?.template.metadata?.labels);
    assert.deepEqual(pod.spec?.volumes, [
      { name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } },
      { name: 'logs', persistentVolumeClaim: { claimName: 'logs-db-0' } },
    ]);
    assert.deepEqual({ ...pod.spec, volumes: undefined }, { ...set.spec?.template.spec, volumes: undefined });
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
