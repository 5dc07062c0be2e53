// The e2e suite compares what the chart declares with what `kubectl auth can-i --list` reports; the
// manager's ClusterRole is aggregated, so what it declares is what the roles it selects hold.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { declaredPermissions } from '../../../e2e/suites/support/rbac.ts';
import { readManifests } from './manifests.ts';

describe('declaredPermissions', () => {
  const manifests = [...readManifests('rbac', 'role.yaml'), ...readManifests('rbac', 'role_binding.yaml')];
  const sa = { name: 'basic-operator', namespace: 'basic-operator-system' };

  it("grants an aggregated ClusterRole's selected roles' rules", () => {
    const granted = declaredPermissions(manifests, sa, 'team-a');
    assert.ok(granted.has('infra.basicoperator.dev machines * patch'));
    assert.ok(granted.has('apiextensions.k8s.io customresourcedefinitions * watch'));
  });

  it('counts a provider role labelled aggregate-to-manager, and no unlabelled one', () => {
    const provider = (name: string, labels: Record<string, string>) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name, labels },
      rules: [{ apiGroups: [`${name}.example.dev`], resources: ['things'], verbs: ['get'] }],
    });
    const granted = declaredPermissions(
      [
        ...manifests,
        provider('labelled', { 'infra.basicoperator.dev/aggregate-to-manager': 'true' }),
        provider('unlabelled', {}),
      ],
      sa,
      'team-a',
    );
    assert.ok(granted.has('labelled.example.dev things * get'));
    assert.ok(!granted.has('unlabelled.example.dev things * get'));
  });
});
