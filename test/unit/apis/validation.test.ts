import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  RULES,
  type ValidationResult,
  validateBasicDeployment,
  validateBasicDeploymentUpdate,
  validateBasicReplicaSet,
  validateBasicReplicaSetUpdate,
  validateMachine,
  validateMachineUpdate,
  validateVolumeBackup,
  validateVolumeBackupUpdate,
} from '../../../src/apis/index.ts';
import { basicDeployment, basicReplicaSet, edited, machine, volumeBackup } from './fixtures.ts';

function errorsOf(result: ValidationResult): string[] {
  assert.equal(result.valid, false, 'expected the object to be rejected');
  return result.valid ? [] : result.errors;
}

const VALID = { valid: true };
const PORT_NAME = '^([0-9]+-)*[0-9]*[a-z][a-z0-9]*(-[a-z0-9]+)*$';

describe('validators accept valid objects', () => {
  it('of each kind, with and without status', () => {
    assert.deepEqual(validateBasicDeployment(basicDeployment()), VALID);
    assert.deepEqual(validateBasicReplicaSet(basicReplicaSet()), VALID);
    assert.deepEqual(validateMachine(machine()), VALID);
    assert.deepEqual(validateVolumeBackup(volumeBackup()), VALID);
    assert.deepEqual(validateBasicDeployment(edited(basicDeployment(), { status: undefined })), VALID);
    assert.deepEqual(validateBasicReplicaSet(edited(basicReplicaSet(), { status: undefined })), VALID);
    assert.deepEqual(validateMachine(edited(machine(), { status: undefined })), VALID);
    assert.deepEqual(validateVolumeBackup(edited(volumeBackup(), { status: undefined })), VALID);
  });

  it('a standalone VolumeBackup (neither machineName nor machineUID), and a verified manifest', () => {
    const standalone = edited(volumeBackup(), {
      'spec.machineName': undefined,
      'spec.machineUID': undefined,
    });
    assert.deepEqual(validateVolumeBackup(standalone), VALID);
    const manifest = { files: 3, bytes: 4096, digest: `sha256:${'ab'.repeat(32)}` };
    assert.deepEqual(
      validateVolumeBackup(edited(volumeBackup(), { 'status.volumes.0.manifest': manifest })),
      VALID,
    );
  });

  it('with only the required fields', () => {
    const minimalDeployment = {
      apiVersion: 'apps.basicoperator.dev/v1alpha1',
      kind: 'BasicDeployment',
      metadata: { name: 'minimal' },
      spec: {
        selector: { matchLabels: { app: 'minimal' } },
        template: {
          metadata: { labels: { app: 'minimal' } },
          spec: { containers: [{ name: 'c', image: 'i' }] },
        },
      },
    };
    assert.deepEqual(validateBasicDeployment(minimalDeployment), VALID);
    const minimalMachine = {
      apiVersion: 'infra.basicoperator.dev/v1alpha1',
      kind: 'Machine',
      metadata: {},
      spec: { image: 'i' },
    };
    assert.deepEqual(validateMachine(minimalMachine), VALID);
  });

  it('with every strategy form the schema allows', () => {
    for (const strategy of [
      { type: 'Recreate' },
      // Left over from a switch to Recreate by a merge patch (kubectl apply): accepted and ignored.
      { type: 'Recreate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      {},
      { rollingUpdate: {} },
      { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
      { type: 'RollingUpdate', rollingUpdate: { maxSurge: '0%', maxUnavailable: '100%' } },
      { type: 'RollingUpdate', rollingUpdate: { maxSurge: '200%' } },
      { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0 } },
      { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
    ]) {
      const result = validateBasicDeployment(edited(basicDeployment(), { 'spec.strategy': strategy }));
      assert.deepEqual(result, VALID, JSON.stringify(strategy));
    }
  });
});

describe('validators reject invalid objects with readable messages', () => {
  const cases: [string, () => ValidationResult, string[]][] = [
    [
      'negative replicas',
      () => validateBasicDeployment(edited(basicDeployment(), { 'spec.replicas': -1 })),
      ['spec.replicas: must be >= 0'],
    ],
    [
      'a replica count beyond int32',
      () => validateBasicReplicaSet(edited(basicReplicaSet(), { 'spec.replicas': 2 ** 31 })),
      ['spec.replicas: must be <= 2147483647', 'spec.replicas: must match format "int32"'],
    ],
    [
      'a fractional replica count',
      () => validateBasicReplicaSet(edited(basicReplicaSet(), { 'spec.replicas': 1.5 })),
      ['spec.replicas: must be integer'],
    ],
    [
      'a missing selector and template',
      () =>
        validateBasicReplicaSet(
          edited(basicReplicaSet(), { 'spec.selector': undefined, 'spec.template': undefined }),
        ),
      ['spec.selector: is required', 'spec.template: is required'],
    ],
    [
      'a wrong kind and apiVersion',
      () => validateBasicDeployment(edited(basicDeployment(), { apiVersion: 'apps/v1', kind: 'Deployment' })),
      [
        'apiVersion: must be one of "apps.basicoperator.dev/v1alpha1"',
        'kind: must be one of "BasicDeployment"',
      ],
    ],
    [
      'an unknown field',
      () => validateBasicDeployment(edited(basicDeployment(), { 'spec.replica': 3 })),
      ['spec.replica: unknown field'],
    ],
    [
      'a non-int-or-string maxUnavailable and a percentless maxSurge',
      () =>
        validateBasicDeployment(
          edited(basicDeployment(), {
            'spec.strategy.rollingUpdate': { maxSurge: '10', maxUnavailable: true },
          }),
        ),
      [
        'spec.strategy.rollingUpdate.maxSurge: must match pattern "^(0|[1-9][0-9]{0,8})%$"',
        'spec.strategy.rollingUpdate.maxUnavailable: must be an integer or a string',
      ],
    ],
    [
      'maxUnavailable above 100% and a negative maxSurge',
      () =>
        validateBasicDeployment(
          edited(basicDeployment(), {
            'spec.strategy.rollingUpdate': { maxSurge: -1, maxUnavailable: '101%' },
          }),
        ),
      [
        'spec.strategy.rollingUpdate.maxSurge: must be >= 0',
        'spec.strategy.rollingUpdate.maxUnavailable: must match pattern "^(100|[1-9]?[0-9])%$"',
      ],
    ],
    [
      'an unknown strategy type',
      () => validateBasicDeployment(edited(basicDeployment(), { 'spec.strategy': { type: 'BlueGreen' } })),
      ['spec.strategy.type: must be one of "RollingUpdate", "Recreate"'],
    ],
    [
      'a container without image',
      () =>
        validateBasicDeployment(
          edited(basicDeployment(), { 'spec.template.spec.containers': [{ name: 'a' }] }),
        ),
      ['spec.template.spec.containers[0].image: is required'],
    ],
    [
      'an empty container list',
      () => validateBasicReplicaSet(edited(basicReplicaSet(), { 'spec.template.spec.containers': [] })),
      ['spec.template.spec.containers: must NOT have fewer than 1 items'],
    ],
    [
      'a label value that is not a label value',
      () =>
        validateBasicReplicaSet(
          edited(basicReplicaSet(), {
            'spec.template.metadata.labels': { app: 'web', 'example.com/x': 'has space' },
          }),
        ),
      [
        'spec.template.metadata.labels[example.com/x]: must match pattern "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"',
      ],
    ],
    [
      'a bad condition',
      () =>
        validateBasicDeployment(
          edited(basicDeployment(), {
            'status.conditions.0.status': 'Yes',
            'status.conditions.0.lastTransitionTime': 'yesterday',
          }),
        ),
      [
        'status.conditions[0].status: must be one of "True", "False", "Unknown"',
        'status.conditions[0].lastTransitionTime: must match format "date-time"',
      ],
    ],
    [
      'two conditions of one type',
      () => {
        const deployment = basicDeployment();
        const [available] = deployment.status?.conditions ?? [];
        assert.ok(available);
        deployment.status?.conditions?.push({ ...available, status: 'False' });
        return validateBasicDeployment(deployment);
      },
      ['status.conditions[1]: duplicate entry with type="Available"'],
    ],
    [
      'a Machine with an empty image, a relative mount path, a bad size and a bad volume name',
      () =>
        validateMachine(
          edited(machine(), {
            'spec.image': '',
            'spec.volumes.0.mountPath': 'data',
            'spec.volumes.0.size': 'lots',
            'spec.volumes.1.name': 'Logs_Dir',
          }),
        ),
      [
        'spec.image: must not be empty',
        'spec.volumes[0].size: must match pattern "^(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$"',
        'spec.volumes[0].mountPath: must match pattern "^/"',
        'spec.volumes[1].name: must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"',
      ],
    ],
    [
      'a Machine whose port and probe port names core/v1 refuses: no letter, a double hyphen, a trailing hyphen',
      () =>
        validateMachine(
          edited(machine(), {
            'spec.ports': [
              { name: '5432', containerPort: 5432 },
              { name: 'pg--admin', containerPort: 5433 },
            ],
            'spec.readinessProbe': { tcpSocket: { port: '8080' } },
            'spec.livenessProbe': { httpGet: { port: 'metrics-' } },
          }),
        ),
      [
        `spec.ports[0].name: must match pattern "${PORT_NAME}"`,
        `spec.ports[1].name: must match pattern "${PORT_NAME}"`,
        `spec.readinessProbe.tcpSocket.port: must match pattern "${PORT_NAME}"`,
        `spec.livenessProbe.httpGet.port: must match pattern "${PORT_NAME}"`,
      ],
    ],
    [
      'a Machine with two volumes of one name, and a half restoreFrom',
      () =>
        validateMachine(
          edited(machine(), {
            'spec.volumes.1.name': 'data',
            'spec.volumes.1.restoreFrom': { volumeBackup: 'db-backup-1' },
          }),
        ),
      [
        'spec.volumes[1].restoreFrom.volume: is required',
        'spec.volumes[1]: duplicate entry with name="data"',
      ],
    ],
    [
      'a Machine with both image and infrastructureRef',
      () =>
        validateMachine(
          edited(machine(), {
            'spec.infrastructureRef': {
              apiVersion: 'examples.basicoperator.dev/v1alpha1',
              kind: 'X',
              name: 'x',
            },
          }),
        ),
      ['spec: set exactly one of image (an inline Machine, realized as a PodMachine) and infrastructureRef'],
    ],
    [
      'a Machine with infrastructureRef and inline volumes',
      () =>
        validateMachine(
          edited(machine(), {
            'spec.image': undefined,
            'spec.infrastructureRef': {
              apiVersion: 'examples.basicoperator.dev/v1alpha1',
              kind: 'X',
              name: 'x',
            },
          }),
        ),
      [`spec: ${RULES.machineInlineFieldsNeedImage.message}`],
    ],
    [
      'a Machine with infrastructureRef and a pod field',
      () =>
        validateMachine({
          ...machine(),
          spec: {
            infrastructureRef: { apiVersion: 'examples.basicoperator.dev/v1alpha1', kind: 'X', name: 'x' },
            resources: { requests: { cpu: '1' } },
          },
        }),
      [`spec: ${RULES.machineInlineFieldsNeedImage.message}`],
    ],
    [
      'a Machine with neither image nor infrastructureRef, and a reference without a group',
      () =>
        validateMachine(
          edited(machine(), {
            'spec.image': undefined,
            'spec.volumes': undefined,
            'spec.infrastructureRef': { apiVersion: 'v1', kind: 'Pod', name: 'x' },
          }),
        ),
      [
        'spec.infrastructureRef.apiVersion: must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[a-z0-9]+$"',
      ],
    ],
    [
      'a Machine with an unknown backup policy and phase',
      () =>
        validateMachine(edited(machine(), { 'spec.backup.policy': 'Always', 'status.phase': 'Sleeping' })),
      [
        'spec.backup.policy: must be one of "OnDelete", "None"',
        'status.phase: must be one of "Pending", "Provisioning", "Running", "Stopping", "Stopped", "Failed"',
      ],
    ],
    [
      'a VolumeBackup with no volumes and a negative attempt count',
      () => validateVolumeBackup(edited(volumeBackup(), { 'spec.volumes': [], 'status.attempts': -1 })),
      ['spec.volumes: must NOT have fewer than 1 items', 'status.attempts: must be >= 0'],
    ],
    [
      'a VolumeBackup whose recorded manifest is negative and not a sha256 digest',
      () =>
        validateVolumeBackup(
          edited(volumeBackup(), {
            'status.volumes.0.manifest': { files: 1, bytes: -1, digest: 'md5:abc' },
          }),
        ),
      [
        'status.volumes[0].manifest.bytes: must be >= 0',
        'status.volumes[0].manifest.digest: must match pattern "^sha256:[0-9a-f]{64}$"',
      ],
    ],
    [
      'a VolumeBackup with an unknown phase and a non-RFC 3339 start time',
      () =>
        validateVolumeBackup(
          edited(volumeBackup(), { 'status.phase': 'Done', 'status.startTime': '2025-01-02 03:04:05' }),
        ),
      [
        'status.phase: must be one of "Pending", "Running", "Completed", "Failed"',
        'status.startTime: must match format "date-time"',
      ],
    ],
    [
      'a missing spec',
      () => validateVolumeBackup(edited(volumeBackup(), { spec: undefined })),
      ['spec: is required'],
    ],
    ['something that is not an object', () => validateMachine('machine'), ['<root>: must be object']],
  ];
  for (const [name, run, expected] of cases) {
    it(name, () => assert.deepEqual(errorsOf(run()).sort(), [...expected].sort()));
  }
});

describe('validators check the CEL rules, with the CRD messages', () => {
  const cases: [string, () => ValidationResult, string[]][] = [
    [
      'a selector that does not match the template labels',
      () => validateBasicDeployment(edited(basicDeployment(), { 'spec.selector.matchLabels.app': 'other' })),
      [`spec.selector: ${RULES.selectorMatchesTemplate.message}`],
    ],
    [
      'an empty selector',
      () => validateBasicReplicaSet(edited(basicReplicaSet(), { 'spec.selector': {} })),
      [`spec.selector: ${RULES.selectorNotEmpty.message}`],
    ],
    [
      'an Exists requirement with values',
      () =>
        validateBasicDeployment(
          edited(basicDeployment(), {
            'spec.selector.matchExpressions': [{ key: 'tier', operator: 'Exists', values: ['x'] }],
          }),
        ),
      [`spec.selector.matchExpressions[0]: ${RULES.selectorRequirementValues.message}`],
    ],
    [
      'maxSurge and maxUnavailable both zero',
      () =>
        validateBasicDeployment(
          edited(basicDeployment(), { 'spec.strategy.rollingUpdate': { maxSurge: 0, maxUnavailable: '0%' } }),
        ),
      ['spec.strategy.rollingUpdate: maxSurge and maxUnavailable must not both be zero'],
    ],
    [
      'a progress deadline not above minReadySeconds',
      () =>
        validateBasicDeployment(
          edited(basicDeployment(), { 'spec.minReadySeconds': 600, 'spec.progressDeadlineSeconds': 600 }),
        ),
      ['spec.progressDeadlineSeconds: progressDeadlineSeconds must be greater than minReadySeconds'],
    ],
    [
      'a VolumeBackup with machineUID but no machineName',
      () => validateVolumeBackup(edited(volumeBackup(), { 'spec.machineName': undefined })),
      [`spec: ${RULES.volumeBackupMachineComplete.message}`],
    ],
    [
      'a VolumeBackup with machineName but no machineUID',
      () => validateVolumeBackup(edited(volumeBackup(), { 'spec.machineUID': undefined })),
      [`spec: ${RULES.volumeBackupMachineComplete.message}`],
    ],
    [
      'two volumes on one mount path, and a zero size',
      () =>
        validateMachine(
          edited(machine(), { 'spec.volumes.1.mountPath': '/data', 'spec.volumes.1.size': '0Gi' }),
        ),
      [
        'spec.volumes: mountPath must be unique across volumes',
        'spec.volumes[1].size: size must be greater than zero',
      ],
    ],
  ];
  for (const [name, run, expected] of cases) {
    it(name, () => assert.deepEqual(errorsOf(run()).sort(), [...expected].sort()));
  }

  it('only once the schema holds, so rules never see malformed objects', () => {
    const object = edited(basicDeployment(), {
      'spec.selector.matchLabels.app': 'other',
      'spec.replicas': 'three',
    });
    assert.deepEqual(errorsOf(validateBasicDeployment(object)), ['spec.replicas: must be integer']);
  });
});

describe('update validators enforce immutability', () => {
  it('of workload selectors', () => {
    const relabelled = edited(basicDeployment(), {
      'spec.selector.matchLabels': { app: 'web', release: 'a' },
      'spec.template.metadata.labels': { app: 'web', tier: 'web', release: 'a' },
    });
    assert.deepEqual(errorsOf(validateBasicDeploymentUpdate(basicDeployment(), relabelled)), [
      'spec.selector: selector is immutable',
    ]);
    const scaled = edited(basicReplicaSet(), { 'spec.replicas': 5 });
    assert.deepEqual(validateBasicReplicaSetUpdate(basicReplicaSet(), scaled), VALID);
  });

  it('of Machine volumes, ignoring their order', () => {
    const reordered = machine();
    reordered.spec.volumes?.reverse();
    assert.deepEqual(validateMachineUpdate(machine(), reordered), VALID);
    const newImage = edited(machine(), { 'spec.image': 'registry.k8s.io/pause:3.9' });
    assert.deepEqual(errorsOf(validateMachineUpdate(machine(), newImage)), [
      'spec: image, command and args are immutable after creation: the PodMachine made from them is never rewritten',
    ]);
    const resized = edited(machine(), { 'spec.volumes.0.size': '2Gi' });
    assert.deepEqual(errorsOf(validateMachineUpdate(machine(), resized)), [
      'spec.volumes: volumes are immutable after creation',
    ]);
    const removed = edited(machine(), { 'spec.volumes': undefined });
    assert.deepEqual(errorsOf(validateMachineUpdate(machine(), removed)), [
      'spec.volumes: volumes are immutable after creation',
    ]);
    const withEnv = edited(machine(), { 'spec.env': [{ name: 'A', value: '1' }] });
    assert.deepEqual(errorsOf(validateMachineUpdate(machine(), withEnv)), [
      `spec: ${RULES.machinePodFieldsImmutable.message}`,
    ]);
  });

  it('of the VolumeBackup spec', () => {
    const reordered = volumeBackup();
    reordered.spec.volumes.reverse();
    assert.deepEqual(validateVolumeBackupUpdate(volumeBackup(), reordered), VALID);
    const statusOnly = edited(volumeBackup(), { 'status.attempts': 2 });
    assert.deepEqual(validateVolumeBackupUpdate(volumeBackup(), statusOnly), VALID);
    const retargeted = edited(volumeBackup(), { 'spec.machineName': 'other' });
    assert.deepEqual(errorsOf(validateVolumeBackupUpdate(volumeBackup(), retargeted)), [
      'spec: spec is immutable',
    ]);
  });

  it('after the create checks', () => {
    const invalid = edited(basicDeployment(), { 'spec.replicas': -1 });
    assert.deepEqual(errorsOf(validateBasicDeploymentUpdate(basicDeployment(), invalid)), [
      'spec.replicas: must be >= 0',
    ]);
  });
});
