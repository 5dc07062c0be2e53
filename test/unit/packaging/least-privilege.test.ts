import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ALLOWANCES,
  type AuditEvent,
  compareWithRoles,
  comparisonProblems,
  operatorUse,
  type RoleRule,
} from '../../../e2e/support/least-privilege.ts';

const APPS = 'apps.basicoperator.dev';

function request(
  verb: string,
  resource: string,
  options: { group?: string; code?: number; stage?: string; userAgent?: string } = {},
): AuditEvent {
  const [name, subresource] = resource.split('/');
  return {
    stage: options.stage ?? (verb === 'watch' ? 'ResponseStarted' : 'ResponseComplete'),
    verb,
    userAgent: options.userAgent ?? 'basic-operator',
    objectRef: { apiGroup: options.group ?? APPS, resource: name, ...(subresource ? { subresource } : {}) },
    responseStatus: { code: options.code ?? 200 },
  };
}

const ROLE: RoleRule[] = [
  { apiGroups: [APPS], resources: ['basicdeployments'], verbs: ['get', 'list', 'watch', 'patch'] },
  { apiGroups: [APPS], resources: ['basicdeployments/status'], verbs: ['patch'] },
  { apiGroups: [APPS], resources: ['basicdeployments/finalizers'], verbs: ['update'] },
];

describe('the operator held to its role by the audit log', () => {
  it("counts the operator's requests once each, its Events client's too, and nobody else's", () => {
    const use = operatorUse([
      request('get', 'basicdeployments'),
      request('get', 'basicdeployments'),
      // A watch is counted when it starts; it completes only when it ends.
      request('watch', 'basicdeployments'),
      request('watch', 'basicdeployments', { stage: 'ResponseComplete' }),
      request('create', 'events', { group: 'events.k8s.io', userAgent: 'basic-operator/events' }),
      request('create', 'basicdeployments', { userAgent: 'basic-operator-tests' }),
      request('delete', 'basicdeployments', { userAgent: 'kubectl/v1.36.3 (linux/amd64) kubernetes/abc' }),
      // Discovery and /version name no object.
      { stage: 'ResponseComplete', verb: 'get', userAgent: 'basic-operator' },
    ]);
    assert.deepEqual(Object.fromEntries(use), {
      [`get ${APPS}/basicdeployments`]: { requests: 2, forbidden: 0 },
      [`watch ${APPS}/basicdeployments`]: { requests: 1, forbidden: 0 },
      'create events.k8s.io/events': { requests: 1, forbidden: 0 },
    });
  });

  it('names each granted permission never requested, except those allowed for with a reason', () => {
    const use = operatorUse([
      request('get', 'basicdeployments'),
      request('list', 'basicdeployments'),
      request('watch', 'basicdeployments'),
      request('patch', 'basicdeployments/status'),
    ]);
    const comparison = compareWithRoles(use, ROLE, ALLOWANCES);
    assert.deepEqual(comparison.unused, [`patch ${APPS}/basicdeployments`]);
    assert.deepEqual(comparison.undeclared, []);
    assert.equal(comparison.requests, 4);
    assert.equal(comparison.distinct, 4);
    assert.equal(comparison.granted, 6);
    assert.deepEqual(compareWithRoles(use, ROLE).unused, [
      `patch ${APPS}/basicdeployments`,
      `update ${APPS}/basicdeployments/finalizers`,
    ]);
  });

  it("names each permission requested and refused that the role lacks, a refused watch included, a provider's kinds left out", () => {
    const use = operatorUse([
      request('get', 'basicdeployments'),
      request('list', 'basicdeployments'),
      request('watch', 'basicdeployments'),
      request('patch', 'basicdeployments'),
      request('patch', 'basicdeployments/status'),
      request('update', 'basicdeployments/status', { code: 403 }),
      request('watch', 'pods', { group: '', code: 403, stage: 'ResponseComplete' }),
      // Refused where the role is bound in other namespaces only: declared, so not a gap in the role.
      request('list', 'basicdeployments', { code: 403 }),
      // A provider's kind: its own role grants it, or a 403 is the provider install's to fix.
      request('list', 'lockedmachines', { group: 'infra.example.com', code: 403 }),
      // Kubernetes' own groups are never a provider's.
      request('create', 'deployments', { group: 'apps', code: 403 }),
      request('create', 'leases', { group: 'coordination.k8s.io', code: 403 }),
    ]);
    const comparison = compareWithRoles(use, ROLE, ALLOWANCES);
    assert.deepEqual(comparison.unused, []);
    assert.deepEqual(comparison.undeclared, [
      'create apps/deployments',
      'create coordination.k8s.io/leases',
      `update ${APPS}/basicdeployments/status`,
      'watch core/pods',
    ]);
    const problems = comparisonProblems(comparison);
    assert.equal(problems.length, 4);
    assert.match(
      problems[2] ?? '',
      /^update apps\.basicoperator\.dev\/basicdeployments\/status: requested .* \(403\)/,
    );
  });

  it('allows for finalizers only, of any kind', () => {
    const allowed = (key: string) => ALLOWANCES.some((a) => a.permissions.test(key));
    assert.ok(allowed('update infra.basicoperator.dev/machines/finalizers'));
    assert.ok(!allowed('update infra.basicoperator.dev/machines'));
    assert.ok(!allowed('patch infra.basicoperator.dev/machines/finalizers'));
    assert.ok(!allowed('update infra.basicoperator.dev/machines/status'));
  });
});
