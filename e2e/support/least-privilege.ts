/**
 * The operator's RBAC held against what it asked the API server for: the requests of an audit log
 * (audit.k8s.io/v1 Events) summed per (verb, group, resource[/subresource]), and compared with the
 * rules of its roles. Pure; least-privilege-report.ts reads the log and the roles.
 */

/** The fields of an audit Event this reads (any audit level records them). */
export interface AuditEvent {
  stage?: string;
  verb?: string;
  userAgent?: string;
  requestReceivedTimestamp?: string;
  objectRef?: { apiGroup?: string; resource?: string; subresource?: string };
  responseStatus?: { code?: number };
}

/** An RBAC PolicyRule as the role files have it (resourceNames narrow a rule; they do not widen it). */
export interface RoleRule {
  apiGroups?: readonly string[];
  resources?: readonly string[];
  verbs: readonly string[];
}

/**
 * The User-Agents the operator's clients send (src/runtime/manager/manager.ts), in its own process and
 * in the tests' in-process managers of its controllers alike; the tests' own clients send
 * `basic-operator-tests`, their own controllers `basic-operator-tests-controllers`, and other programs
 * on the runtime their own name (ManagerOptions.userAgent).
 */
export const OPERATOR_USER_AGENTS: readonly string[] = [
  'basic-operator',
  'basic-operator/events',
  'basic-operator/leader-election',
];

/** `verb group/resource[/subresource]`, the core group written `core`. */
export type Permission = string;

export function permission(verb: string, group: string, resource: string): Permission {
  return `${verb} ${group || 'core'}/${resource}`;
}

export interface Use {
  requests: number;
  /** Answered 403: the role does not grant it. */
  forbidden: number;
}

/**
 * The operator's requests per permission. A request is counted once: at ResponseComplete, or, for a
 * watch (which completes only when it ends), at ResponseStarted. Requests without an object (discovery,
 * /version) need no RBAC rule and are left out.
 */
export function operatorUse(
  events: Iterable<AuditEvent>,
  into = new Map<Permission, Use>(),
): Map<Permission, Use> {
  for (const event of events) {
    if (!OPERATOR_USER_AGENTS.includes(event.userAgent ?? '')) continue;
    const { verb, objectRef } = event;
    if (!verb || !objectRef?.resource) continue;
    const counted = verb === 'watch' ? 'ResponseStarted' : 'ResponseComplete';
    // A watch refused before it started has no ResponseStarted stage.
    const refusedWatch =
      verb === 'watch' && event.stage === 'ResponseComplete' && event.responseStatus?.code === 403;
    if (event.stage !== counted && event.stage !== 'Panic' && !refusedWatch) continue;
    const resource = objectRef.subresource
      ? `${objectRef.resource}/${objectRef.subresource}`
      : objectRef.resource;
    const key = permission(verb, objectRef.apiGroup ?? '', resource);
    const use = into.get(key) ?? { requests: 0, forbidden: 0 };
    use.requests++;
    if (event.responseStatus?.code === 403) use.forbidden++;
    into.set(key, use);
  }
  return into;
}

/** Every permission the rules grant. */
export function granted(rules: readonly RoleRule[]): Set<Permission> {
  const out = new Set<Permission>();
  for (const rule of rules) {
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        for (const verb of rule.verbs) out.add(permission(verb, group, resource));
      }
    }
  }
  return out;
}

/** Granted permissions no request shows, and why they are granted all the same. */
export interface Allowance {
  readonly permissions: RegExp;
  readonly reason: string;
}

/**
 * Granted and never requested, on purpose. The API server asks for update on an owner's finalizers
 * itself (the OwnerReferencesPermissionEnforcement admission plugin, where it runs) when the
 * operator writes an owner reference with blockOwnerDeletion: no request ever names it.
 */
export const ALLOWANCES: readonly Allowance[] = [
  {
    permissions: /^update [a-z.]+\/[a-z]+\/finalizers$/,
    reason: 'checked by admission when an owner reference blocks deletion; never requested',
  },
];

export interface Comparison {
  /** Granted, never requested, and not allowed for. */
  unused: Permission[];
  /** Requested and refused (403): the role lacks it. A provider's kinds are left out (see below). */
  undeclared: Permission[];
  /** Distinct permissions requested, and requests in all. */
  distinct: number;
  requests: number;
  /** Permissions the rules grant. */
  granted: number;
}

/**
 * The role against the requests. A permission the role grants counts as used when any request of the
 * operator asked for it, whatever the answer; one it lacks shows as a 403 (where the operator ran with
 * the role; the tests' in-process managers run as cluster admin and are never refused).
 */
export function compareWithRoles(
  use: ReadonlyMap<Permission, Use>,
  rules: readonly RoleRule[],
  allowances: readonly Allowance[] = [],
): Comparison {
  const grants = granted(rules);
  const unused = [...grants]
    .filter((key) => !use.has(key) && !allowances.some((a) => a.permissions.test(key)))
    .sort();
  const ownGroups = new Set([...grants].map(groupOf));
  const undeclared = [...use]
    .filter(([key, u]) => u.forbidden > 0 && !grants.has(key) && !isProviderGroup(groupOf(key), ownGroups))
    .map(([key]) => key)
    .sort();
  let requests = 0;
  for (const u of use.values()) requests += u.requests;
  return { unused, undeclared, distinct: use.size, requests, granted: grants.size };
}

function groupOf(key: Permission): string {
  return key.slice(key.indexOf(' ') + 1).split('/')[0] ?? '';
}

/**
 * A custom resource's API group that the role never names is a provider's: the Machine controller
 * reads, owns and deletes provider objects with the rights of the provider's own ClusterRole,
 * aggregated into the operator's (docs/contracts.md), and a 403 there is the provider install's to
 * fix (the tests provoke one on purpose). Kubernetes' own groups (no dot, or `*.k8s.io`) are never a
 * provider's.
 */
function isProviderGroup(group: string, ownGroups: ReadonlySet<string>): boolean {
  const builtIn = !group.includes('.') || group.endsWith('.k8s.io') || group.endsWith('.kubernetes.io');
  return !builtIn && !ownGroups.has(group);
}

/** What went wrong, one line per permission; empty when the role is exactly what was used. */
export function comparisonProblems(comparison: Comparison): string[] {
  return [
    ...comparison.unused.map(
      (key) =>
        `${key}: granted, never requested by the operator; drop it from its declaration (src/controllers/*/declaration.ts) or allow for it with a reason (ALLOWANCES in e2e/support/least-privilege.ts)`,
    ),
    ...comparison.undeclared.map(
      (key) =>
        `${key}: requested by the operator and refused (403); declare it beside the controller that calls it`,
    ),
  ];
}
