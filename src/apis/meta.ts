// Types and names shared by every API group.

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** metav1.Condition, as JSON: timestamps are RFC 3339 strings. */
export interface Condition {
  /** CamelCase, e.g. `Ready`; unique within a conditions list. */
  type: string;
  status: ConditionStatus;
  /** Generation of the object the condition was computed from. */
  observedGeneration?: number;
  /** RFC 3339 time of the last change of `status`. */
  lastTransitionTime: string;
  /** CamelCase machine-readable reason, e.g. `MinimumReplicasAvailable`. */
  reason: string;
  message: string;
}

/** Set on everything the operator creates, and on its CRDs. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'basic-operator';

/** Everything a caller needs to address one custom resource kind. */
export interface ApiResource {
  readonly group: string;
  readonly version: string;
  /** `group/version`, as written in an object's `apiVersion`. */
  readonly apiVersion: string;
  readonly kind: string;
  readonly listKind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly namespaced: boolean;
}
