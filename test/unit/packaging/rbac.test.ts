import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AGGREGATE_TO_MANAGER_LABEL, CUSTOM_RESOURCE_DEFINITIONS } from '../../../src/apis/index.ts';
import { CONTROLLERS } from '../../../src/controllers/index.ts';
import { FLAGS } from '../../../src/runtime/manager/config.ts';
import { find, normalizeRules, RBAC_ROLES, type RoleManifest, readManifests } from './manifests.ts';

describe('config/rbac grants least privilege', () => {
  const roles = RBAC_ROLES.map((r) => find<RoleManifest>(readManifests('rbac', r.file), r.kind, r.name));
  const aggregated = find<RoleManifest>(
    readManifests('rbac', 'role.yaml'),
    'ClusterRole',
    'basic-operator-manager',
  );
  // The operator's own rules, bound beside the aggregated role of the providers' rules.
  const manager = find<RoleManifest>(
    readManifests('rbac', 'role.yaml'),
    'ClusterRole',
    'basic-operator-manager-base',
  );

  it("binds the operator's own role and an aggregated ClusterRole of the providers' roles", () => {
    assert.deepEqual(aggregated.aggregationRule, {
      clusterRoleSelectors: [{ matchLabels: { [AGGREGATE_TO_MANAGER_LABEL]: 'true' } }],
    });
    assert.deepEqual(aggregated.rules ?? [], [], 'the control plane fills the rules in');
    const bindings = readManifests('rbac', 'role_binding.yaml');
    for (const role of ['basic-operator-manager-base', 'basic-operator-manager']) {
      const binding = find<RoleManifest & { roleRef?: { name: string } }>(
        bindings,
        'ClusterRoleBinding',
        role,
      );
      assert.equal(binding.roleRef?.name, role);
    }
  });

  // kube-controller-manager writes an aggregated role's rules by server-side apply, which creates the
  // role when it is gone: deleting a role it selects together with it (an uninstall) can leave the
  // aggregated role behind (test/integration/packaging/uninstall-with-provider.test.ts).
  it("selects none of the operator's own roles into the aggregated one", () => {
    for (const file of new Set(RBAC_ROLES.map((r) => r.file))) {
      for (const role of readManifests('rbac', file)) {
        assert.equal(role.metadata.labels?.[AGGREGATE_TO_MANAGER_LABEL], undefined, role.metadata.name);
      }
    }
  });

  it('lets the Machine controller read CRDs (which kinds declare the contract) into its cache', () => {
    assert.deepEqual(verbsFor('apiextensions.k8s.io', 'customresourcedefinitions'), ['list', 'watch']);
  });

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

  /**
   * What the operator does with each kind there is: users create and delete the kinds they own; the
   * operator writes its own finalizers and annotations by patch. `npm test` holds these against the
   * API server's audit log (e2e/support/least-privilege.ts). A kind added since has no row, and is
   * held by what every kind needs; a row of a kind that is gone fails.
   */
  const VERBS: Readonly<Record<string, string[]>> = {
    basicdeployments: ['get', 'list', 'patch', 'watch'],
    // Created, adopted and released (patch), scaled (update), deleted by the BasicDeployment controller.
    basicreplicasets: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    machines: ['get', 'list', 'patch', 'watch'],
    // The Machine controller creates, owns (patch), asks to stop (patch) and deletes PodMachines,
    // and never writes their spec.
    podmachines: ['create', 'delete', 'get', 'list', 'patch', 'watch'],
    // Recorded by the Machine backup controller; users delete them.
    volumebackups: ['create', 'list', 'watch'],
  };

  it('has a row of verbs for kinds there are only', () => {
    const plurals = CUSTOM_RESOURCE_DEFINITIONS.map((crd) => crd.spec.names.plural);
    for (const plural of Object.keys(VERBS)) assert.ok(plurals.includes(plural), `no CRD of ${plural}`);
  });

  for (const crd of CUSTOM_RESOURCE_DEFINITIONS) {
    const { group } = crd.spec;
    const { plural } = crd.spec.names;
    it(`lets the controllers manage ${plural}.${group}, its status and its finalizers`, () => {
      const verbs = VERBS[plural];
      if (verbs) assert.deepEqual(verbsFor(group, plural), verbs);
      // Every kind: its controller's cache lists and watches it.
      for (const verb of ['list', 'watch']) assert.ok(verbsFor(group, plural).includes(verb), verb);
      // Status is written by patch (merge or apply) only.
      assert.deepEqual(verbsFor(group, `${plural}/status`), ['patch']);
      // Owner references with blockOwnerDeletion need update on the owner's finalizers: on every
      // kind of a row (each owns children), and on a kind added since if its controller owns some.
      const ownsChildren = CONTROLLERS.some(
        (c) => c.reconciles.group === group && c.reconciles.plural === plural && c.owns.length > 0,
      );
      if (verbs || ownsChildren) assert.deepEqual(verbsFor(group, `${plural}/finalizers`), ['update']);
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
