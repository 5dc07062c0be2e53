export {
  assertValidCondition,
  type Condition,
  type ConditionInput,
  type ConditionStatus,
  conditionProblems,
  conditionsEqual,
  findCondition,
  isConditionFalse,
  isConditionTrue,
  isValidConditionReason,
  removeCondition,
  rfc3339,
  setCondition,
} from './conditions.ts';
export {
  addFinalizer,
  addFinalizerPatch,
  hasFinalizer,
  removeFinalizer,
  removeFinalizerPatch,
} from './finalizers.ts';
export {
  absentListGuard,
  DEFAULT_GUARDED_PATCH_ATTEMPTS,
  DEFAULT_GUARDED_PATCH_BACKOFF,
  type GuardedPatchOptions,
  isGuardFailure,
  type JsonPatch,
  patchWithGuards,
  uidGuard,
} from './guarded-patch.ts';
export { applyMergePatch, replacementMergePatch, toJsonValue } from './merge-patch.ts';
export {
  adopt,
  adoptPatch,
  controllerReference,
  hasControllerRef,
  isControlledBy,
  release,
  releasePatch,
} from './owner-refs.ts';
export {
  type Backoff,
  backoffDelays,
  DEFAULT_RETRY,
  DEFAULT_TRANSIENT_RETRY,
  type RetryOptions,
  type RetryPolicy,
  retryOnConflict,
  retryOnError,
  retryOnTransient,
} from './retry.ts';
export {
  desiredStatus,
  type ObjectWithStatus,
  replaceStatus,
  type StatusOf,
  type StatusWriteOptions,
  type StatusWriteResult,
  statusChanged,
  statusMergePatch,
  updateStatus,
} from './status.ts';
