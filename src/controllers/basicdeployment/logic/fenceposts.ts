import { type IntOrPercent, parseIntOrPercent, resolveIntOrPercent } from './int-or-percent.ts';
import type { DeploymentView } from './types.ts';

/** The contract's defaults for an unset maxSurge / maxUnavailable. */
export const DEFAULT_MAX_SURGE: IntOrPercent = '25%';
export const DEFAULT_MAX_UNAVAILABLE: IntOrPercent = '25%';

export interface Fenceposts {
  /** Pods allowed above the desired count. */
  surge: number;
  /** Pods allowed below the desired count. */
  unavailable: number;
}

/**
 * Resolves maxSurge (rounded up) and maxUnavailable (rounded down) together, as upstream
 * ResolveFenceposts does. If both come out 0, unavailable becomes 1 so a rollout can still move
 * when surging is impossible (for example because of quota). E.g. 25% of 10: surge 3, unavailable 2.
 */
export function resolveFenceposts(
  maxSurge: IntOrPercent | undefined,
  maxUnavailable: IntOrPercent | undefined,
  desired: number,
): Fenceposts {
  const surge = resolveIntOrPercent(maxSurge ?? DEFAULT_MAX_SURGE, desired, 'up', 'maxSurge');
  const unavailable = resolveIntOrPercent(
    maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE,
    desired,
    'down',
    'maxUnavailable',
  );
  if (surge === 0 && unavailable === 0) return { surge: 0, unavailable: 1 };
  return { surge, unavailable };
}

export function isRollingUpdate(deployment: DeploymentView): boolean {
  return deployment.strategy.type === 'RollingUpdate';
}

function fenceposts(deployment: DeploymentView): Fenceposts {
  const params = deployment.strategy.rollingUpdate;
  return resolveFenceposts(params?.maxSurge, params?.maxUnavailable, deployment.replicas);
}

/** Pods a rolling deployment may run above spec.replicas; 0 for Recreate. */
export function maxSurge(deployment: DeploymentView): number {
  return isRollingUpdate(deployment) ? fenceposts(deployment).surge : 0;
}

/** Pods a rolling deployment may miss below spec.replicas, never more than spec.replicas; 0 for Recreate. */
export function maxUnavailable(deployment: DeploymentView): number {
  if (!isRollingUpdate(deployment) || deployment.replicas === 0) return 0;
  return Math.min(fenceposts(deployment).unavailable, deployment.replicas);
}

/**
 * Available pods the deployment needs to count as Available: spec.replicas - maxUnavailable, so every
 * replica under Recreate (whose maxUnavailable is 0, as upstream's MaxUnavailable).
 */
export function minAvailable(deployment: DeploymentView): number {
  return deployment.replicas - maxUnavailable(deployment);
}

/**
 * Validation messages for rollingUpdate parameters (apps/v1 rules): each is a non-negative integer or
 * percentage, maxUnavailable is at most 100%, and they are not both zero. maxSurge may exceed 100%.
 * An integer maxUnavailable above spec.replicas is allowed; it is clamped when used.
 */
export function validateRollingUpdate(
  maxSurgeValue: IntOrPercent | undefined,
  maxUnavailableValue: IntOrPercent | undefined,
): string[] {
  const problems: string[] = [];
  const surge = tryParse(maxSurgeValue ?? DEFAULT_MAX_SURGE, 'maxSurge', problems);
  const unavailable = tryParse(maxUnavailableValue ?? DEFAULT_MAX_UNAVAILABLE, 'maxUnavailable', problems);
  if (unavailable?.isPercent && unavailable.value > 100) {
    problems.push('maxUnavailable: must not be greater than 100%');
  }
  if (surge?.value === 0 && unavailable?.value === 0) {
    problems.push('maxSurge and maxUnavailable: may not both be 0');
  }
  return problems;
}

function tryParse(value: IntOrPercent, field: string, problems: string[]) {
  try {
    return parseIntOrPercent(value, field);
  } catch (error) {
    problems.push(error instanceof Error ? error.message : String(error));
    return undefined;
  }
}
