import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MOVER_COMMAND } from '../../../src/apis/index.ts';
import {
  desiredClaim,
  desiredPod,
  desiredRestoreJob,
  restoreProbePod,
  storageRequest,
} from '../../../src/controllers/podmachine/logic/children.ts';
import {
  claimName,
  podMachineLabels,
  podName,
  restoreJobName,
} from '../../../src/controllers/podmachine/names.ts';
import { boundedName } from '../../../src/controllers/shared/names.ts';
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

describe('desiredPod: the pod fields and the restricted defaults', () => {
  const RESTRICTED_POD = {
    runAsNonRoot: true,
    runAsUser: 65532,
    runAsGroup: 65532,
    fsGroup: 65532,
    fsGroupChangePolicy: 'OnRootMismatch',
    seccompProfile: { type: 'RuntimeDefault' },
  };
  const RESTRICTED_CONTAINER = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };

  it('with no security fields: passes Pod Security restricted, runs as 65532, mounts no API token', () => {
    const spec = desiredPod(podMachine()).spec!;
    assert.deepEqual(restrictedViolations(spec), []);
    assert.deepEqual(spec.securityContext, RESTRICTED_POD);
    assert.deepEqual(spec.containers[0]?.securityContext, RESTRICTED_CONTAINER);
    assert.equal(spec.automountServiceAccountToken, false);
    assert.equal(spec.serviceAccountName, undefined, "the namespace's default ServiceAccount");
    for (const field of [
      'env',
      'envFrom',
      'resources',
      'ports',
      'readinessProbe',
      'livenessProbe',
      'startupProbe',
    ])
      assert.ok(!(field in spec.containers[0]!), `${field} absent when unset`);
    for (const field of ['nodeSelector', 'tolerations', 'affinity']) assert.ok(!(field in spec), field);
  });

  it('puts each container field on the container and each pod field on the pod', () => {
    const fields = {
      env: [
        { name: 'MODE', value: 'primary' },
        { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
      ],
      envFrom: [{ prefix: 'APP_', configMapRef: { name: 'settings' } }],
      resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '512Mi' } },
      ports: [{ name: 'pg', containerPort: 5432, protocol: 'TCP' }],
      readinessProbe: { exec: { command: ['pg_isready'] }, periodSeconds: 5 },
      livenessProbe: { tcpSocket: { port: 'pg' }, failureThreshold: 6 },
      startupProbe: { httpGet: { path: '/started', port: 8080 } },
      serviceAccountName: 'db',
      nodeSelector: { disk: 'ssd' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' }],
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'db' } } },
          ],
        },
      },
    };
    const pm = podMachine(structuredClone(fields));
    const spec = desiredPod(pm).spec!;
    const container = spec.containers[0]!;
    assert.deepEqual(container.env, fields.env);
    assert.deepEqual(container.envFrom, fields.envFrom);
    assert.deepEqual(container.resources, fields.resources);
    assert.deepEqual(container.ports, fields.ports);
    assert.deepEqual(container.readinessProbe, fields.readinessProbe);
    assert.deepEqual(container.livenessProbe, fields.livenessProbe);
    assert.deepEqual(container.startupProbe, fields.startupProbe);
    assert.equal(spec.serviceAccountName, 'db');
    assert.deepEqual(spec.nodeSelector, fields.nodeSelector);
    assert.deepEqual(spec.tolerations, fields.tolerations);
    assert.deepEqual(spec.affinity, fields.affinity);
    assert.notEqual(
      container.env,
      pm.spec.env,
      "a copy: the pod never shares the cached PodMachine's objects",
    );
    assert.deepEqual(restrictedViolations(spec), [], 'none of these fields loosens the defaults');
  });

  it("merges the user's security fields over the defaults field by field", () => {
    const spec = desiredPod(
      podMachine({
        podSecurityContext: { runAsUser: 999, supplementalGroups: [5] },
        securityContext: { readOnlyRootFilesystem: true, capabilities: { add: ['NET_BIND_SERVICE'] } },
      }),
    ).spec!;
    assert.deepEqual(spec.securityContext, { ...RESTRICTED_POD, runAsUser: 999, supplementalGroups: [5] });
    assert.deepEqual(spec.containers[0]?.securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] },
    });
    assert.deepEqual(restrictedViolations(spec), []);
  });

  it('gives what is asked for, also beyond restricted: admission judges it', () => {
    const spec = desiredPod(
      podMachine({
        podSecurityContext: { runAsNonRoot: false, seccompProfile: { type: 'Unconfined' } },
        securityContext: { privileged: true, capabilities: { drop: [] } },
      }),
    ).spec!;
    assert.equal(spec.securityContext?.runAsNonRoot, false);
    assert.deepEqual(spec.securityContext?.seccompProfile, { type: 'Unconfined' });
    // No allowPrivilegeEscalation default: core/v1 refuses false beside privileged.
    assert.deepEqual(spec.containers[0]?.securityContext, { privileged: true, capabilities: { drop: [] } });
    assert.ok(restrictedViolations(spec).includes('machine: privileged'));
  });

  it('gives no allowPrivilegeEscalation default beside capabilities.add CAP_SYS_ADMIN: core/v1 refuses false there', () => {
    const added = desiredPod(podMachine({ securityContext: { capabilities: { add: ['CAP_SYS_ADMIN'] } } }))
      .spec!;
    assert.deepEqual(added.containers[0]?.securityContext, {
      capabilities: { drop: ['ALL'], add: ['CAP_SYS_ADMIN'] },
    });
    // Spelled without the prefix core/v1 does not look for it, and the default stays.
    const plain = desiredPod(podMachine({ securityContext: { capabilities: { add: ['SYS_ADMIN'] } } })).spec!;
    assert.equal(plain.containers[0]?.securityContext?.allowPrivilegeEscalation, false);
  });

  it('does not default runAsNonRoot when the pod or the container asks for uid 0', () => {
    const root = desiredPod(podMachine({ podSecurityContext: { runAsUser: 0 } })).spec!;
    assert.equal(root.securityContext?.runAsNonRoot, undefined);
    assert.equal(root.securityContext?.runAsUser, 0);
    const rootContainer = desiredPod(podMachine({ securityContext: { runAsUser: 0 } })).spec!;
    assert.equal(rootContainer.securityContext?.runAsNonRoot, undefined);
  });

  it('mounts an API token only when automountServiceAccountToken is true', () => {
    assert.equal(
      desiredPod(podMachine({ automountServiceAccountToken: true })).spec?.automountServiceAccountToken,
      true,
    );
    assert.equal(
      desiredPod(podMachine({ automountServiceAccountToken: false })).spec?.automountServiceAccountToken,
      false,
    );
  });
});

describe('desiredRestoreJob', () => {
  const manifest = { files: 12, bytes: 34567, digest: `sha256:${'0f'.repeat(32)}` };
  const copy = {
    backupClaimName: 'old-1234abcd-data',
    image: 'ghcr.io/basicoperator/basic-operator:0.1.0',
    activeDeadlineSeconds: 3600,
  };
  const nonroot = { mode: 'nonroot', uid: 65532, gid: 65532, level: 'restricted' } as const;

  it("copies the backup claim (read-only) into the claim with the mover in the operator's image, expecting the backup's manifest", () => {
    const pm = podMachine();
    const job = desiredRestoreJob(pm, pm.spec.volumes![0]!, {
      ...copy,
      privilege: { mode: 'root' },
      expect: manifest,
    });
    assert.equal(job.metadata?.name, 'web-data-restore');
    assert.deepEqual(job.metadata?.labels, {
      ...LABELS,
      'infra.basicoperator.dev/volume': 'data',
      'infra.basicoperator.dev/role': 'restore',
    });
    assert.deepEqual(job.metadata?.ownerReferences, [CONTROLLER]);
    const spec = job.spec?.template.spec;
    assert.deepEqual(job.spec?.template.metadata?.labels, job.metadata?.labels, 'its pods are ours, cached');
    assert.equal(spec?.restartPolicy, 'Never');
    const container = spec?.containers[0];
    assert.equal(container?.image, 'ghcr.io/basicoperator/basic-operator:0.1.0');
    assert.deepEqual(container?.command, MOVER_COMMAND);
    assert.deepEqual(container?.args, [
      'copy',
      '--source',
      '/source',
      '--target',
      '/target',
      '--expect',
      `12:34567:sha256:${'0f'.repeat(32)}`,
    ]);
    assert.equal(container?.terminationMessagePolicy, 'FallbackToLogsOnError', 'a failure says why');
    assert.deepEqual(spec?.volumes, [
      { name: 'source', persistentVolumeClaim: { claimName: 'old-1234abcd-data', readOnly: true } },
      { name: 'target', persistentVolumeClaim: { claimName: 'web-data' } },
    ]);
    assert.equal(spec?.securityContext?.runAsUser, 0, 'root keeps every owner');
    assert.equal(spec?.securityContext?.fsGroup, undefined, 'no fsGroup: it would rewrite groups');
    assert.deepEqual(container?.securityContext?.capabilities, {
      drop: ['ALL'],
      add: ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID'],
    });
    assert.equal(job.spec?.backoffLimit, 3);
    assert.equal(job.spec?.activeDeadlineSeconds, 3600, 'a restore that cannot run or hangs ends');
  });

  it('a backup without a manifest: nothing to expect; non-root: passes Pod Security restricted and names it', () => {
    const pm = podMachine();
    const job = desiredRestoreJob(pm, pm.spec.volumes![0]!, { ...copy, privilege: nonroot });
    const spec = job.spec!.template.spec!;
    assert.deepEqual(spec.containers[0]?.args, [
      'copy',
      '--source',
      '/source',
      '--target',
      '/target',
      '--pod-security-level',
      'restricted',
    ]);
    assert.equal(spec.securityContext?.runAsUser, 65532);
    assert.deepEqual(restrictedViolations(spec), []);
  });

  it('mounts no API token and no service links into the copy pod, as root or not: the mover only copies files', () => {
    const pm = podMachine();
    for (const privilege of [{ mode: 'root' } as const, nonroot]) {
      const spec = desiredRestoreJob(pm, pm.spec.volumes![0]!, { ...copy, privilege }).spec?.template.spec;
      assert.equal(spec?.automountServiceAccountToken, false, privilege.mode);
      assert.equal(spec?.enableServiceLinks, false, privilege.mode);
    }
  });

  it('the probe asked of admission is the root copy pod of the same restore, in the namespace, by generateName', () => {
    const pm = podMachine();
    const volume = pm.spec.volumes![0]!;
    const probe = restoreProbePod(pm, volume, { ...copy, expect: manifest });
    const root = desiredRestoreJob(pm, volume, { ...copy, privilege: { mode: 'root' }, expect: manifest });
    assert.deepEqual(probe.metadata, {
      generateName: 'web-data-restore-',
      namespace: 'ns',
      labels: root.metadata?.labels,
    });
    assert.deepEqual(probe.spec, root.spec?.template.spec);
  });
});
