// Types and names shared by every API group.

/** metav1.Condition, as JSON (timestamps are RFC 3339 strings): the runtime's condition helpers' type. */
export type { Condition, ConditionStatus } from '../runtime/write/conditions.ts';

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
