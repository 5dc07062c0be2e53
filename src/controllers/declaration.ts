import type { ResourceType } from '../runtime/client/resource.ts';
import type { Manager } from '../runtime/manager/manager.ts';
import type { OperatorOptions } from './flags.ts';

/** One rule of the operator's ClusterRole (an RBAC PolicyRule on resources). */
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

/**
 * What a controller is and what it needs, declared beside its index.ts. `registerControllers`
 * registers every declaration of src/controllers/index.ts; `npm run generate` writes from the same
 * list the operator's ClusterRole (config/rbac/role.yaml and the chart's rules, each rule the union of
 * what the controllers declare), the aggregated edit and view roles of the kinds they reconcile, and
 * the kinds `kubectl basic` starts from.
 */
export interface ControllerDeclaration {
  /** The name it registers under: its logs, metrics and `--concurrency` entry. */
  readonly name: string;
  /** The kind it reconciles (the builder's `for`). */
  readonly reconciles: ResourceType;
  /** The kinds of the children it controls (the builder's `owns`). */
  readonly owns: readonly ResourceType[];
  /**
   * Every call it makes to the API server, its Events included, and nothing more: a status is
   * written by patch only (runtime/write/status-strategy.ts), so `<kind>/status` needs `patch` alone.
   * `npm test` holds this against the API server's audit log (docs/install.md).
   */
  readonly rules: readonly PolicyRule[];
  readonly register: (manager: Manager, options: OperatorOptions) => void;
}

/**
 * The runtime's Event recorder (`manager.eventsFor`), which every controller reports with: it creates
 * an Event, then patches its count as the same Event repeats; it never reads them back.
 */
export const EVENTS_RULE: PolicyRule = {
  apiGroups: ['events.k8s.io'],
  resources: ['events'],
  verbs: ['create', 'patch'],
};

/**
 * The manager's own rules, no controller's: who may read /metrics, each scrape's token and
 * permission asked of the API server. The chart grants them apart too, cluster-wide, when the
 * manager's role is bound in some namespaces only.
 */
export const METRICS_AUTH_RULES: readonly PolicyRule[] = [
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
];
