import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MACHINE, MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../../../src/apis/index.ts';
import { desiredPodMachine } from '../../../src/controllers/machine/inline.ts';
import {
  crossNamespaceProblem,
  infrastructureRefOf,
  refersTo,
} from '../../../src/controllers/machine/reference.ts';
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
  it("is the Machine's image, command, args and volumes, named after it, controlled by it, labelled managed-by", () => {
    const m = machine({ command: ['sleep'], args: ['3600'] });
    assert.deepEqual(desiredPodMachine(m), {
      apiVersion: 'infra.basicoperator.dev/v1alpha1',
      kind: 'PodMachine',
      metadata: {
        name: 'web',
        namespace: 'ns',
        labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
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
});
