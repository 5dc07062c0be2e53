import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import {
  checkContractLabel,
  checkCrdFound,
  checkNamespaced,
  checkStatusSubresource,
  chooseVersion,
} from '../../../e2e/contract/crd.ts';

const LABEL = 'machine-contract.infra.basicoperator.dev/v1';

function crd(
  kind: string,
  group: string,
  options: {
    labels?: Record<string, string>;
    scope?: string;
    versions?: { name: string; served?: boolean; storage?: boolean; status?: boolean }[];
    established?: string;
  } = {},
): V1CustomResourceDefinition {
  const plural = `${kind.toLowerCase()}s`;
  return {
    metadata: { name: `${plural}.${group}`, labels: options.labels ?? { [LABEL]: 'v1alpha1' } },
    spec: {
      group,
      names: { kind, plural },
      scope: options.scope ?? 'Namespaced',
      versions: (options.versions ?? [{ name: 'v1alpha1' }]).map((v) => ({
        name: v.name,
        served: v.served ?? true,
        storage: v.storage ?? true,
        ...(v.status === false ? {} : { subresources: { status: {} } }),
      })),
    },
    status: {
      acceptedNames: { kind, plural },
      storedVersions: [],
      conditions: [{ type: 'Established', status: options.established ?? 'True' }],
    },
  };
}

const target = { kind: 'PodMachine', group: 'infra.basicoperator.dev' };

describe('checkCrdFound', () => {
  it('finds the CRD by group and kind', () => {
    const found = checkCrdFound([crd('Machine', target.group), crd('PodMachine', target.group)], target);
    assert.equal(found.crd?.metadata?.name, 'podmachines.infra.basicoperator.dev');
    assert.deepEqual(found.result, {
      check: 'crd-found',
      status: 'pass',
      detail: 'CRD podmachines.infra.basicoperator.dev',
    });
  });

  it('says what the group holds when the kind is not there', () => {
    const found = checkCrdFound([crd('Machine', target.group), crd('PodMachine', 'other.dev')], target);
    assert.equal(found.crd, undefined);
    assert.equal(
      found.result.detail,
      'no CustomResourceDefinition has group infra.basicoperator.dev and kind PodMachine; the group has: Machine',
    );
    assert.match(checkCrdFound([], target).result.detail, /; the group has none$/);
  });

  it('fails a CRD that is not established', () => {
    const found = checkCrdFound([crd('PodMachine', target.group, { established: 'False' })], target);
    assert.equal(found.crd, undefined);
    assert.equal(
      found.result.detail,
      'CRD podmachines.infra.basicoperator.dev is not established (Established=False)',
    );
  });
});

describe('checkNamespaced and checkStatusSubresource', () => {
  it('pass a namespaced CRD whose version has a status subresource', () => {
    assert.equal(checkNamespaced(crd('PodMachine', target.group)).status, 'pass');
    assert.equal(checkStatusSubresource(crd('PodMachine', target.group), 'v1alpha1').status, 'pass');
  });

  it('fail a cluster-scoped CRD and a version without status subresource', () => {
    assert.equal(
      checkNamespaced(crd('PodMachine', target.group, { scope: 'Cluster' })).detail,
      "scope is Cluster: a provider object must live in its Machine's namespace (scope Namespaced)",
    );
    const noStatus = crd('PodMachine', target.group, { versions: [{ name: 'v1alpha1', status: false }] });
    assert.match(
      checkStatusSubresource(noStatus, 'v1alpha1').detail,
      /^version v1alpha1 has no status subresource/,
    );
  });
});

describe('chooseVersion', () => {
  const versions = [
    { name: 'v1alpha1', storage: false },
    { name: 'v1beta1', storage: true },
    { name: 'v1', served: false, storage: false },
  ];

  it('takes the requested version if served', () => {
    assert.deepEqual(chooseVersion(crd('PodMachine', target.group, { versions }), 'v1alpha1'), {
      version: 'v1alpha1',
    });
    assert.deepEqual(chooseVersion(crd('PodMachine', target.group, { versions }), 'v1'), {
      problem:
        'CRD podmachines.infra.basicoperator.dev does not serve version v1 (it serves: v1alpha1, v1beta1)',
    });
  });

  it('else the first served version the contract label lists, else the storage version', () => {
    const labelled = crd('PodMachine', target.group, {
      versions,
      labels: { [LABEL]: 'v1_v1beta1_v1alpha1' },
    });
    assert.deepEqual(chooseVersion(labelled, undefined), { version: 'v1beta1' });
    const unlabelled = crd('PodMachine', target.group, { versions, labels: {} });
    assert.deepEqual(chooseVersion(unlabelled, undefined), { version: 'v1beta1' });
  });
});

describe('checkContractLabel', () => {
  it('passes a label that lists the tested version', () => {
    const labelled = crd('PodMachine', target.group, { labels: { [LABEL]: 'v1alpha1' } });
    assert.deepEqual(checkContractLabel(labelled, 'v1alpha1'), {
      check: 'crd-contract-label',
      status: 'pass',
      detail: `${LABEL}=v1alpha1; testing v1alpha1`,
    });
  });

  it('fails no label, a label of unserved versions only, and one without the tested version', () => {
    const versions = [{ name: 'v1alpha1' }, { name: 'v1beta1', storage: false }];
    assert.match(
      checkContractLabel(crd('PodMachine', target.group, { labels: {} }), 'v1alpha1').detail,
      /^CRD podmachines.infra.basicoperator.dev has no label machine-contract.infra.basicoperator.dev\/v1 /,
    );
    assert.equal(
      checkContractLabel(crd('PodMachine', target.group, { versions, labels: { [LABEL]: 'v2' } }), 'v1alpha1')
        .detail,
      `CRD podmachines.infra.basicoperator.dev: ${LABEL}="v2" lists no version the CRD serves (it serves: v1alpha1, v1beta1)`,
    );
    assert.equal(
      checkContractLabel(
        crd('PodMachine', target.group, { versions, labels: { [LABEL]: 'v1beta1' } }),
        'v1alpha1',
      ).detail,
      `CRD podmachines.infra.basicoperator.dev: ${LABEL}="v1beta1" does not list v1alpha1, the version under test`,
    );
  });
});
