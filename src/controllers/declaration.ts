import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { Shape } from '../runtime/cache/keep-fields.ts';
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
 * the kinds `kubectl basic` starts from; and at startup, what the operator's cache keeps of the core
 * objects it caches (cache-transforms.ts).
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
  /** What it reads of the Pods, Jobs and claims it caches; none if it caches none. */
  readonly reads?: CacheReads;
  readonly register: (manager: Manager, options: OperatorOptions) => void;
}

/**
 * What a controller reads of each core kind the operator caches, as shapes (runtime/cache/keep-fields.ts)
 * written `as const` in the controller's cached.ts, which also exports the types they give
 * (`Kept<V1Pod, typeof POD_READS>`): its informers and every function it hands their objects to take
 * those, so reading a field its shape does not name does not compile. The cache keeps of each kind
 * the union of what the controllers declare, and nothing else.
 */
export interface CacheReads {
  readonly pods?: Shape<V1Pod>;
  /**
   * What it reads of the pods that carry `label` (the pods it makes), kept of those pods only: for
   * fields every pod has (its IPs) that no reader of the other pods needs.
   */
  readonly labelledPods?: { readonly label: string; readonly shape: Shape<V1Pod> };
  readonly jobs?: Shape<V1Job>;
  readonly claims?: Shape<V1PersistentVolumeClaim>;
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
