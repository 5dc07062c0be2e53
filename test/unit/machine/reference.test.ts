import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CREATED_FOR_ANNOTATION,
  MACHINE,
  MACHINE_POD_FIELDS,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  type MachinePodFields,
} from '../../../src/apis/index.ts';
import { desiredPodMachine } from '../../../src/controllers/machine/logic/inline.ts';
import {
  crossNamespaceProblem,
  infrastructureRefOf,
  refersTo,
} from '../../../src/controllers/machine/logic/reference.ts';
import { cloudMachine, cloudRef, MACHINE_UID, machine, referencing } from './fixtures.ts';

describe('infrastructureRefOf', () => {
  it('an inline Machine uses the PodMachine of its name; a referencing one its reference (without a namespace)', () => {
    assert.deepEqual(infrastructureRefOf(machine()), {
      apiVersion: 'infra.basicoperator.dev/v1alpha1',
      kind: 'PodMachine',
      name: 'web',
    });
    assert.deepEqual(
      infrastructureRefOf(referencing(cloudRef('vm-1', { namespace: 'ns' }))),
      cloudRef('vm-1'),
    );
  });
});

describe('crossNamespaceProblem', () => {
  it('refuses a reference to another namespace, and only that', () => {
    assert.match(
      crossNamespaceProblem(referencing(cloudRef('vm-1', { namespace: 'other' }))) ?? '',
      /CloudMachine vm-1 in namespace other; a provider object must be in the Machine's namespace \(ns\)/,
    );
    assert.equal(crossNamespaceProblem(referencing(cloudRef('vm-1', { namespace: 'ns' }))), undefined);
    assert.equal(crossNamespaceProblem(referencing(cloudRef('vm-1'))), undefined);
    assert.equal(crossNamespaceProblem(machine()), undefined);
  });
});

describe('refersTo', () => {
  it('matches group, kind, namespace and name, whatever the version', () => {
    const m = referencing(cloudRef('vm-1'));
    assert.equal(refersTo(m, cloudMachine('vm-1')), true);
    assert.equal(refersTo(m, { ...cloudMachine('vm-1'), apiVersion: 'cloud.example.dev/v2' }), true);
    assert.equal(refersTo(m, cloudMachine('vm-2')), false);
    assert.equal(refersTo(m, { ...cloudMachine('vm-1'), kind: 'OtherMachine' }), false);
    assert.equal(refersTo(m, { ...cloudMachine('vm-1'), apiVersion: 'other.example.dev/v1' }), false);
    assert.equal(refersTo(m, cloudMachine('vm-1', undefined, { namespace: 'other' })), false);
    assert.equal(
      refersTo(referencing(cloudRef('vm-1', { namespace: 'other' })), cloudMachine('vm-1')),
      false,
    );
  });
});

describe('desiredPodMachine', () => {
  it("is the Machine's image, command, args and volumes, named after it, controlled by it, labelled managed-by, saying which Machine made it", () => {
    const m = machine({ command: ['sleep'], args: ['3600'] });
    assert.deepEqual(desiredPodMachine(m), {
      apiVersion: 'infra.basicoperator.dev/v1alpha1',
      kind: 'PodMachine',
      metadata: {
        name: 'web',
        namespace: 'ns',
        labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
        annotations: { [CREATED_FOR_ANNOTATION]: MACHINE_UID },
        ownerReferences: [
          {
            apiVersion: MACHINE.apiVersion,
            kind: 'Machine',
            name: 'web',
            uid: MACHINE_UID,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: { image: 'app:1', command: ['sleep'], args: ['3600'], volumes: m.spec.volumes },
    });
  });

  it('leaves out what the Machine leaves out', () => {
    const { spec } = desiredPodMachine(machine({ volumes: undefined }));
    assert.deepEqual(spec, { image: 'app:1' });
  });

  it('copies every pod field the Machine sets, as a copy', () => {
    const fields: MachinePodFields = {
      env: [{ name: 'PGPASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } }],
      envFrom: [{ configMapRef: { name: 'settings' } }],
      resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '512Mi' } },
      ports: [{ name: 'pg', containerPort: 5432 }],
      readinessProbe: { exec: { command: ['pg_isready'] }, periodSeconds: 5 },
      livenessProbe: { tcpSocket: { port: 'pg' } },
      startupProbe: { exec: { command: ['pg_isready'] }, failureThreshold: 30 },
      securityContext: { readOnlyRootFilesystem: true },
      podSecurityContext: { runAsUser: 999, runAsGroup: 999, fsGroup: 999 },
      serviceAccountName: 'db',
      automountServiceAccountToken: true,
      nodeSelector: { disk: 'ssd' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' }],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }],
          },
        },
      },
    };
    assert.deepEqual(Object.keys(fields).sort(), [...MACHINE_POD_FIELDS].sort(), 'every field is exercised');
    const m = machine({ volumes: undefined, ...structuredClone(fields) });
    const { spec } = desiredPodMachine(m);
    assert.deepEqual(spec, { image: 'app:1', ...fields });
    assert.notEqual(spec.env, m.spec.env, "a copy, not the cached Machine's objects");
  });
});
