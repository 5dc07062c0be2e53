import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { V1ClusterRoleBinding, V1Deployment, V1RoleBinding, V1Service } from '@kubernetes/client-node';
import { CUSTOM_RESOURCE_DEFINITIONS } from '../../../src/apis/index.ts';
import { FLAGS } from '../../../src/runtime/manager/config.ts';
import {
  find,
  HELM_MISSING,
  type Manifest,
  normalizeRules,
  type RoleManifest,
  readManifests,
  renderChart,
} from './manifests.ts';

/**
 * The chart and config/ (kustomize) are two hand-written descriptions of one install. These tests
 * keep them the same where it matters: RBAC rules, bindings, the operator's pod spec and Service.
 */

const ROLES: ReadonlyArray<{ kind: 'ClusterRole' | 'Role'; name: string; file: string }> = [
  { kind: 'ClusterRole', name: 'basic-operator-manager', file: 'role.yaml' },
  { kind: 'Role', name: 'basic-operator-leader-election', file: 'leader_election_role.yaml' },
  { kind: 'ClusterRole', name: 'basic-operator-edit', file: 'aggregate_roles.yaml' },
  { kind: 'ClusterRole', name: 'basic-operator-view', file: 'aggregate_roles.yaml' },
];

const BINDINGS: ReadonlyArray<{ kind: 'ClusterRoleBinding' | 'RoleBinding'; name: string; file: string }> = [
  { kind: 'ClusterRoleBinding', name: 'basic-operator-manager', file: 'role_binding.yaml' },
  { kind: 'RoleBinding', name: 'basic-operator-leader-election', file: 'leader_election_role_binding.yaml' },
];

const AGGREGATION_LABEL_PREFIX = 'rbac.authorization.k8s.io/aggregate-to-';

function aggregationLabels(manifest: Manifest): Record<string, string> {
  return Object.fromEntries(
    Object.entries(manifest.metadata.labels ?? {}).filter(([key]) =>
      key.startsWith(AGGREGATION_LABEL_PREFIX),
    ),
  );
}

describe('chart and config/ RBAC stay in sync', { skip: HELM_MISSING }, () => {
  let chart: Manifest[];
  before(async () => {
    chart = await renderChart();
  });

  for (const role of ROLES) {
    it(`${role.kind} ${role.name} has the same rules and aggregation labels`, () => {
      const fromChart = find<RoleManifest>(chart, role.kind, role.name);
      const fromConfig = find<RoleManifest>(readManifests('rbac', role.file), role.kind, role.name);
      assert.deepEqual(normalizeRules(fromChart.rules), normalizeRules(fromConfig.rules));
      assert.deepEqual(aggregationLabels(fromChart), aggregationLabels(fromConfig));
    });
  }

  for (const binding of BINDINGS) {
    it(`${binding.kind} ${binding.name} binds the same role to the same ServiceAccount`, () => {
      const fromChart = find<Manifest & V1RoleBinding>(chart, binding.kind, binding.name);
      const fromConfig = find<Manifest & V1RoleBinding>(
        readManifests('rbac', binding.file),
        binding.kind,
        binding.name,
      );
      assert.deepEqual(fromChart.roleRef, fromConfig.roleRef);
      assert.deepEqual(fromChart.subjects, fromConfig.subjects);
    });
  }

  it('renders no RBAC object that config/rbac lacks', () => {
    const rbacKinds = new Set(['ClusterRole', 'Role', 'ClusterRoleBinding', 'RoleBinding', 'ServiceAccount']);
    const inChart = chart
      .filter((m) => rbacKinds.has(m.kind))
      .map((m) => `${m.kind}/${m.metadata.name}`)
      .sort();
    const files = [...new Set([...ROLES, ...BINDINGS].map((r) => r.file)), 'service_account.yaml'];
    const inConfig = files
      .flatMap((file) => readManifests('rbac', file))
      .map((m) => `${m.kind}/${m.metadata.name}`)
      .sort();
    assert.deepEqual(inChart, inConfig);
  });

  it('the operator Deployment has the same pod spec in both', () => {
    const fromChart = find<Manifest & V1Deployment>(chart, 'Deployment', 'basic-operator');
    const fromConfig = find<Manifest & V1Deployment>(
      readManifests('manager', 'manager.yaml'),
      'Deployment',
      'basic-operator',
    );
    assert.deepEqual(fromChart.spec?.template.spec, fromConfig.spec?.template.spec);
    assert.deepEqual(fromChart.spec?.selector, fromConfig.spec?.selector);
    assert.equal(fromChart.spec?.replicas, fromConfig.spec?.replicas);
  });

  it('the metrics Service is the same in both', () => {
    const fromChart = find<Manifest & V1Service>(chart, 'Service', 'basic-operator-metrics');
    const fromConfig = find<Manifest & V1Service>(
      readManifests('manager', 'metrics_service.yaml'),
      'Service',
      'basic-operator-metrics',
    );
    assert.deepEqual(fromChart.spec, fromConfig.spec);
  });

  it('the ClusterRoleBinding names the ServiceAccount the Deployment runs as', () => {
    const binding = find<Manifest & V1ClusterRoleBinding>(
      chart,
      'ClusterRoleBinding',
      'basic-operator-manager',
    );
    const deployment = find<Manifest & V1Deployment>(chart, 'Deployment', 'basic-operator');
    assert.deepEqual(binding.subjects, [
      {
        kind: 'ServiceAccount',
        name: deployment.spec?.template.spec?.serviceAccountName,
        namespace: deployment.metadata.namespace,
      },
    ]);
  });
});

describe('config/rbac grants least privilege', () => {
  const roles = ROLES.map((r) => find<RoleManifest>(readManifests('rbac', r.file), r.kind, r.name));
  const manager = find<RoleManifest>(
    readManifests('rbac', 'role.yaml'),
    'ClusterRole',
    'basic-operator-manager',
  );

  it('uses no wildcards', () => {
    for (const role of roles) {
      for (const rule of role.rules ?? []) {
        for (const list of [rule.apiGroups, rule.resources, rule.verbs, rule.resourceNames]) {
          assert.ok(!list?.includes('*'), `${role.metadata.name}: wildcard in ${JSON.stringify(rule)}`);
        }
      }
    }
  });

  const verbsFor = (group: string, resource: string): string[] =>
    (manager.rules ?? [])
      .filter((r) => r.apiGroups?.includes(group) && r.resources?.includes(resource))
      .flatMap((r) => r.verbs)
      .sort();

  for (const crd of CUSTOM_RESOURCE_DEFINITIONS) {
    const { group } = crd.spec;
    const { plural } = crd.spec.names;
    it(`lets the controllers manage ${plural}.${group}, its status and its finalizers`, () => {
      assert.deepEqual(verbsFor(group, plural), [
        'create',
        'delete',
        'get',
        'list',
        'patch',
        'update',
        'watch',
      ]);
      assert.deepEqual(verbsFor(group, `${plural}/status`), ['get', 'patch', 'update']);
      // Owner references with blockOwnerDeletion need update on the owner's finalizers.
      assert.deepEqual(verbsFor(group, `${plural}/finalizers`), ['update']);
    });
  }

  it('limits the leader-election Role to reading and renewing the operator Lease', () => {
    const role = find<RoleManifest>(
      readManifests('rbac', 'leader_election_role.yaml'),
      'Role',
      'basic-operator-leader-election',
    );
    assert.deepEqual(normalizeRules(role.rules), [
      { verbs: ['create'], apiGroups: ['coordination.k8s.io'], resources: ['leases'] },
      {
        verbs: ['get', 'update'],
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: [FLAGS['leader-election-id'].default],
      },
    ]);
  });

  it('gives the aggregated edit and view roles every custom resource', () => {
    const edit = roles.find((r) => r.metadata.name === 'basic-operator-edit');
    const view = roles.find((r) => r.metadata.name === 'basic-operator-view');
    for (const crd of CUSTOM_RESOURCE_DEFINITIONS) {
      const { plural } = crd.spec.names;
      const covers = (role: RoleManifest | undefined, resource: string, verb: string) =>
        (role?.rules ?? []).some(
          (r) =>
            r.apiGroups?.includes(crd.spec.group) &&
            r.resources?.includes(resource) &&
            r.verbs.includes(verb),
        );
      assert.ok(covers(edit, plural, 'create'), `edit role cannot create ${plural}`);
      assert.ok(covers(view, plural, 'list'), `view role cannot list ${plural}`);
      assert.ok(covers(view, `${plural}/status`, 'get'), `view role cannot read ${plural}/status`);
      if (crd.spec.versions.some((v) => v.subresources?.scale)) {
        assert.ok(covers(edit, `${plural}/scale`, 'update'), `edit role cannot scale ${plural}`);
      }
    }
  });
});
