// The provider's manifests: its CRD (generated, declaring the contract), its RBAC (least privilege,
// and the ClusterRole the operator aggregates), the kustomization that deploys it, the sample.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { V1Deployment } from '@kubernetes/client-node';
import { load } from 'js-yaml';
import { statefulSetMachineCrd } from '../../../examples/statefulset-provider/src/crd.ts';
import { LEASE_NAME } from '../../../examples/statefulset-provider/src/flags.ts';
import {
  CRD_FILE,
  crdIsStale,
  GENERATE_COMMAND,
} from '../../../examples/statefulset-provider/src/generate-crd.ts';
import { AGGREGATE_TO_MANAGER_LABEL, contractVersions, podMachineSchema } from '../../../src/apis/index.ts';
import {
  find,
  type Manifest,
  normalizeRules,
  parseManifests,
  REPO_ROOT,
  type RoleManifest,
} from '../packaging/manifests.ts';

const EXAMPLE = join(REPO_ROOT, 'examples', 'statefulset-provider');
const read = (...path: string[]) => parseManifests(readFileSync(join(EXAMPLE, ...path), 'utf8'));

describe('the StatefulSetMachine CRD', () => {
  it(`is generated: ${GENERATE_COMMAND} leaves it as it is`, () => {
    assert.equal(crdIsStale(), false, `${CRD_FILE} is stale; run ${GENERATE_COMMAND}`);
  });

  it('declares contract v1 for its one version', () => {
    const [crd] = read('crd', 'examples.basicoperator.dev_statefulsetmachines.yaml');
    assert.deepEqual(contractVersions(crd?.metadata.labels), ['v1alpha1']);
    assert.deepEqual(
      statefulSetMachineCrd.spec.versions.map((v) => v.name),
      ['v1alpha1'],
    );
  });

  it('is namespaced with a status subresource and the Phase, Ready and Age columns', () => {
    const version = statefulSetMachineCrd.spec.versions[0];
    assert.equal(statefulSetMachineCrd.metadata.name, 'statefulsetmachines.examples.basicoperator.dev');
    assert.equal(statefulSetMachineCrd.spec.scope, 'Namespaced');
    assert.deepEqual(version?.subresources, { status: {} });
    assert.deepEqual(
      version?.additionalPrinterColumns?.map((c) => c.name),
      ['Phase', 'Ready', 'Age'],
    );
  });

  it("has PodMachine's spec, so a backup of either provider restores into the other", () => {
    const ours = statefulSetMachineCrd.spec.versions[0]?.schema.openAPIV3Schema.properties?.spec?.properties;
    const podMachine = podMachineSchema.properties?.spec?.properties;
    assert.deepEqual(ours, podMachine);
  });
});

describe('the provider RBAC', () => {
  const rbac = ['role.yaml', 'leader_election_role.yaml', 'machine_controller_role.yaml'].flatMap((f) =>
    read('rbac', f),
  );
  const provider = find<RoleManifest>(rbac, 'ClusterRole', 'statefulset-provider');
  const verbs = (group: string, resource: string) =>
    normalizeRules(provider.rules)
      .filter((r) => r.apiGroups?.includes(group) && r.resources?.includes(resource))
      .flatMap((r) => r.verbs)
      .sort();

  it('uses no wildcards', () => {
    for (const role of rbac as RoleManifest[]) {
      for (const rule of role.rules ?? []) {
        for (const list of [rule.apiGroups, rule.resources, rule.verbs]) assert.ok(!list?.includes('*'));
      }
    }
  });

  it('only reads pods (create is for dry runs: reconciler.test.ts) and VolumeBackups, and never deletes a StatefulSet or a claim', () => {
    assert.deepEqual(verbs('', 'pods'), ['create', 'get', 'list', 'watch']);
    assert.deepEqual(verbs('infra.basicoperator.dev', 'volumebackups'), ['get', 'list', 'watch']);
    assert.deepEqual(verbs('apps', 'statefulsets'), ['create', 'get', 'list', 'patch', 'watch']);
    assert.deepEqual(verbs('', 'persistentvolumeclaims'), ['create', 'get', 'list', 'patch', 'watch']);
    assert.deepEqual(verbs('batch', 'jobs'), ['create', 'delete', 'get', 'list', 'watch']);
    assert.deepEqual(verbs('examples.basicoperator.dev', 'statefulsetmachines'), ['get', 'list', 'watch']);
    assert.deepEqual(verbs('examples.basicoperator.dev', 'statefulsetmachines/status'), ['patch']);
    assert.deepEqual(verbs('examples.basicoperator.dev', 'statefulsetmachines/finalizers'), ['update']);
    assert.deepEqual(verbs('', 'services'), []);
  });

  it('renews only its own Lease, whose name is the default of --leader-election-id', () => {
    const role = find<RoleManifest>(rbac, 'Role', 'statefulset-provider-leader-election');
    assert.deepEqual(normalizeRules(role.rules), [
      { verbs: ['create'], apiGroups: ['coordination.k8s.io'], resources: ['leases'] },
      {
        verbs: ['get', 'update'],
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: [LEASE_NAME],
      },
    ]);
  });

  it("gives the operator's Machine controller what the contract needs, through aggregation", () => {
    const role = find<RoleManifest>(rbac, 'ClusterRole', 'statefulset-provider-machine-controller');
    assert.equal(role.metadata.labels?.[AGGREGATE_TO_MANAGER_LABEL], 'true');
    assert.deepEqual(normalizeRules(role.rules), [
      {
        verbs: ['delete', 'get', 'list', 'patch', 'watch'],
        apiGroups: ['examples.basicoperator.dev'],
        resources: ['statefulsetmachines'],
      },
    ]);
  });
});

describe('the deployment', () => {
  interface Kustomization {
    resources: string[];
  }
  const kustomization = (dir: string) =>
    load(readFileSync(join(EXAMPLE, dir, 'kustomization.yaml'), 'utf8')) as Kustomization;

  it('lists files that exist', () => {
    for (const dir of ['crd', 'rbac', 'deploy']) {
      for (const resource of kustomization(dir).resources) {
        assert.ok(existsSync(join(EXAMPLE, dir, resource)), `${dir}/${resource}`);
      }
    }
  });

  it('runs the provider entry point with leader election, as its own ServiceAccount', () => {
    const deployment = find<Manifest & V1Deployment>(
      read('deploy', 'deployment.yaml'),
      'Deployment',
      'statefulset-provider',
    );
    const pod = deployment.spec?.template.spec;
    const container = pod?.containers[0];
    assert.equal(pod?.serviceAccountName, 'statefulset-provider');
    const script = container?.command?.[1] ?? '';
    assert.equal(script, 'examples/statefulset-provider/src/main.ts');
    assert.ok(existsSync(join(REPO_ROOT, script)));
    assert.ok(container?.args?.includes('--leader-elect'));
    assert.ok(container?.env?.some((e) => e.name === 'POD_NAMESPACE'));
  });

  it('has a sample StatefulSetMachine (one object, as the conformance kit reads it) and a Machine using it', () => {
    const [provider, ...more] = read('samples', 'statefulsetmachine.yaml');
    assert.equal(more.length, 0);
    assert.equal(provider?.kind, 'StatefulSetMachine');
    const machine = find(read('samples', 'machine.yaml'), 'Machine', 'machine-statefulset-sample');
    assert.deepEqual((machine.spec as { infrastructureRef?: unknown }).infrastructureRef, {
      apiVersion: provider?.apiVersion,
      kind: provider?.kind,
      name: provider?.metadata.name,
    });
  });
});
