import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type {
  V1ClusterRoleBinding,
  V1Deployment,
  V1PodDisruptionBudget,
  V1RoleBinding,
  V1Service,
  V1ServiceAccount,
} from '@kubernetes/client-node';
import { AGGREGATE_TO_MANAGER_LABEL } from '../../../src/apis/index.ts';
import {
  find,
  type Manifest,
  normalizeRules,
  RBAC_ROLES,
  type RoleManifest,
  readManifests,
} from '../../unit/packaging/manifests.ts';
import { renderChart } from './helm.ts';

/**
 * The chart and config/ (kustomize) are two hand-written descriptions of one install. These tests
 * keep them the same where it matters: RBAC rules, bindings, the operator's pod spec, Service,
 * NetworkPolicy and PodDisruptionBudget.
 */

const BINDINGS: ReadonlyArray<{ kind: 'ClusterRoleBinding' | 'RoleBinding'; name: string; file: string }> = [
  { kind: 'ClusterRoleBinding', name: 'basic-operator-manager-base', file: 'role_binding.yaml' },
  { kind: 'ClusterRoleBinding', name: 'basic-operator-manager', file: 'role_binding.yaml' },
  { kind: 'RoleBinding', name: 'basic-operator-leader-election', file: 'leader_election_role_binding.yaml' },
];

const AGGREGATION_LABEL_PREFIXES = ['rbac.authorization.k8s.io/aggregate-to-', AGGREGATE_TO_MANAGER_LABEL];

function aggregationLabels(manifest: Manifest): Record<string, string> {
  return Object.fromEntries(
    Object.entries(manifest.metadata.labels ?? {}).filter(([key]) =>
      AGGREGATION_LABEL_PREFIXES.some((prefix) => key.startsWith(prefix)),
    ),
  );
}

describe('chart and config/ RBAC stay in sync', () => {
  let chart: Manifest[];
  before(async () => {
    chart = await renderChart();
  });

  for (const role of RBAC_ROLES) {
    it(`${role.kind} ${role.name} has the same rules, aggregation rule and aggregation labels`, () => {
      const fromChart = find<RoleManifest>(chart, role.kind, role.name);
      const fromConfig = find<RoleManifest>(readManifests('rbac', role.file), role.kind, role.name);
      assert.deepEqual(normalizeRules(fromChart.rules), normalizeRules(fromConfig.rules));
      assert.deepEqual(fromChart.aggregationRule, fromConfig.aggregationRule);
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

  it('renders no RBAC object that config/rbac lacks (helm test hooks aside)', () => {
    const rbacKinds = new Set(['ClusterRole', 'Role', 'ClusterRoleBinding', 'RoleBinding', 'ServiceAccount']);
    const inChart = chart
      .filter((m) => rbacKinds.has(m.kind) && m.metadata.annotations?.['helm.sh/hook'] !== 'test')
      .map((m) => `${m.kind}/${m.metadata.name}`)
      .sort();
    const files = [...new Set([...RBAC_ROLES, ...BINDINGS].map((r) => r.file)), 'service_account.yaml'];
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

  it('the PodDisruptionBudget is the same in both', () => {
    const fromChart = find<Manifest & V1PodDisruptionBudget>(chart, 'PodDisruptionBudget', 'basic-operator');
    const fromConfig = find<Manifest & V1PodDisruptionBudget>(
      readManifests('manager', 'pod_disruption_budget.yaml'),
      'PodDisruptionBudget',
      'basic-operator',
    );
    assert.deepEqual(fromChart.spec, fromConfig.spec);
  });

  it('the NetworkPolicy is the same in both, but for the helm test Pod the chart lets in', () => {
    // As YAML has it (client-node's V1NetworkPolicyIngressRule calls `from` `_from`).
    type Policy = Manifest & {
      spec: { ingress: Array<{ from: Array<{ podSelector?: { matchLabels?: Record<string, string> } }> }> };
    };
    const name = 'basic-operator-allow-metrics';
    const fromChart = find<Policy>(chart, 'NetworkPolicy', name);
    const fromConfig = find<Policy>(readManifests('manager', 'network_policy.yaml'), 'NetworkPolicy', name);
    const withoutTestPod = structuredClone(fromChart.spec);
    const peers = withoutTestPod.ingress[0]?.from ?? [];
    assert.equal(peers.at(-1)?.podSelector?.matchLabels?.['app.kubernetes.io/component'], 'test');
    peers.pop();
    assert.deepEqual(withoutTestPod, fromConfig.spec);
  });

  it('the ServiceAccount mounts no token into pods that do not ask, in both', () => {
    const fromChart = find<Manifest & V1ServiceAccount>(chart, 'ServiceAccount', 'basic-operator');
    const fromConfig = find<Manifest & V1ServiceAccount>(
      readManifests('rbac', 'service_account.yaml'),
      'ServiceAccount',
      'basic-operator',
    );
    assert.equal(fromChart.automountServiceAccountToken, false);
    assert.equal(fromConfig.automountServiceAccountToken, false);
  });

  it('the ClusterRoleBindings name the ServiceAccount the Deployment runs as', () => {
    const deployment = find<Manifest & V1Deployment>(chart, 'Deployment', 'basic-operator');
    for (const name of ['basic-operator-manager-base', 'basic-operator-manager']) {
      const binding = find<Manifest & V1ClusterRoleBinding>(chart, 'ClusterRoleBinding', name);
      assert.deepEqual(binding.subjects, [
        {
          kind: 'ServiceAccount',
          name: deployment.spec?.template.spec?.serviceAccountName,
          namespace: deployment.metadata.namespace,
        },
      ]);
    }
  });
});
