import type { RbacV1Subject, V1AggregationRule, V1PolicyRule, V1RoleRef } from '@kubernetes/client-node';
import type { Manifest } from './release.ts';

/**
 * RBAC rules as sets of single permissions, "group resource resourceName verb", so what the chart
 * declares and what `kubectl auth can-i --list` reports compare one permission at a time, whatever
 * way either side groups them into rules.
 */
export type Permission = string;

const permission = (group: string, resource: string, resourceName: string, verb: string): Permission =>
  `${group || 'core'} ${resource} ${resourceName || '*'} ${verb}`;

/** What every authenticated user may do (system:basic-user); not the chart's business. */
const DEFAULT_GRANTS = new Set([
  'selfsubjectaccessreviews.authorization.k8s.io',
  'selfsubjectrulesreviews.authorization.k8s.io',
  'selfsubjectreviews.authentication.k8s.io',
]);

export function expandRule(rule: V1PolicyRule): Permission[] {
  if (rule.nonResourceURLs?.length) return [];
  const out: Permission[] = [];
  const names = rule.resourceNames?.length ? rule.resourceNames : [''];
  for (const group of rule.apiGroups ?? [])
    for (const resource of rule.resources ?? [])
      for (const name of names)
        for (const verb of rule.verbs) out.push(permission(group, resource, name, verb));
  return out;
}

interface Binding extends Manifest {
  roleRef: V1RoleRef;
  subjects?: RbacV1Subject[];
}

interface Role extends Manifest {
  rules?: V1PolicyRule[];
  aggregationRule?: V1AggregationRule;
}

/**
 * The rules a role grants: its own, or for an aggregated ClusterRole (whose rules the control plane
 * fills in) those of every ClusterRole in `manifests` whose labels its selectors match.
 */
function rulesOf(role: Role, manifests: Manifest[]): V1PolicyRule[] {
  const selectors = role.aggregationRule?.clusterRoleSelectors;
  if (!selectors) return role.rules ?? [];
  const matches = (labels: Record<string, string> | undefined) =>
    selectors.some((selector) => {
      if (selector.matchExpressions?.length) {
        throw new Error(`${role.metadata.name}: aggregation by matchExpressions is not supported here`);
      }
      return Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels?.[key] === value);
    });
  return manifests
    .filter((m): m is Role => m.kind === 'ClusterRole' && m !== role && matches(m.metadata.labels))
    .flatMap((m) => m.rules ?? []);
}

/**
 * The permissions the rendered chart grants the ServiceAccount in `namespace`: the rules of every
 * Role or ClusterRole that a RoleBinding there, or a ClusterRoleBinding, binds to it (an aggregated
 * ClusterRole's from the chart's ClusterRoles it selects).
 */
export function declaredPermissions(
  manifests: Manifest[],
  serviceAccount: { name: string; namespace: string },
  namespace: string,
): Set<Permission> {
  const bindsServiceAccount = (b: Binding) =>
    (b.subjects ?? []).some(
      (s) =>
        s.kind === 'ServiceAccount' &&
        s.name === serviceAccount.name &&
        s.namespace === serviceAccount.namespace,
    );
  const bindings = manifests.filter(
    (m): m is Binding =>
      (m.kind === 'ClusterRoleBinding' || (m.kind === 'RoleBinding' && m.metadata.namespace === namespace)) &&
      bindsServiceAccount(m as Binding),
  );
  const out = new Set<Permission>();
  for (const binding of bindings) {
    const role = manifests.find(
      (m): m is Role =>
        m.kind === binding.roleRef.kind &&
        m.metadata.name === binding.roleRef.name &&
        (m.kind === 'ClusterRole' || m.metadata.namespace === binding.metadata.namespace),
    );
    if (!role) {
      throw new Error(
        `${binding.kind} ${binding.metadata.name} refers to ${binding.roleRef.kind} ${binding.roleRef.name}, which the chart does not render`,
      );
    }
    for (const rule of rulesOf(role, manifests)) for (const p of expandRule(rule)) out.add(p);
  }
  return out;
}

/** "[get list watch]" -> ["get", "list", "watch"]; "[]" -> []. */
function bracketList(cell: string): string[] {
  const inner = cell.trim().replace(/^\[/, '').replace(/\]$/, '').trim();
  return inner === '' ? [] : inner.split(/\s+/);
}

/**
 * The permissions in `kubectl auth can-i --list` output (a table: Resources, Non-Resource URLs,
 * Resource Names, Verbs; resources print as resource.group). Non-resource URLs and the self-review
 * APIs every authenticated user gets are left out.
 */
export function parseCanIList(table: string): Set<Permission> {
  const lines = table.split('\n').filter((l) => l.trim() !== '');
  const header = lines.shift() ?? '';
  const columns = ['Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs'].map((title) => {
    const at = header.indexOf(title);
    if (at < 0) throw new Error(`unexpected kubectl auth can-i --list header: ${header}`);
    return at;
  });
  const out = new Set<Permission>();
  for (const line of lines) {
    const [resourceCell, urlCell, namesCell, verbsCell] = columns.map((start, i) =>
      line.slice(start, columns[i + 1] ?? line.length).trim(),
    );
    if (!resourceCell || bracketList(urlCell ?? '').length > 0 || DEFAULT_GRANTS.has(resourceCell)) continue;
    // "resource.group/subresource" ("events.events.k8s.io", "machines.infra.basicoperator.dev/status");
    // resource names hold no dots, so the group starts after the first one.
    const [qualified = '', subresource] = resourceCell.split('/');
    const dot = qualified.indexOf('.');
    const group = dot < 0 ? '' : qualified.slice(dot + 1);
    const base = dot < 0 ? qualified : qualified.slice(0, dot);
    const resource = subresource ? `${base}/${subresource}` : base;
    const names = bracketList(namesCell ?? '');
    for (const name of names.length ? names : [''])
      for (const verb of bracketList(verbsCell ?? '')) out.add(permission(group, resource, name, verb));
  }
  return out;
}

/** Permissions in `a` that are not in `b`, sorted for a readable assertion message. */
export function missingFrom(a: Set<Permission>, b: Set<Permission>): Permission[] {
  return [...a].filter((p) => !b.has(p)).sort();
}
