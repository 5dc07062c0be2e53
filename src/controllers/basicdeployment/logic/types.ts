import type { Timestamp } from '../../../runtime/time.ts';
import type { IntOrPercent } from './int-or-percent.ts';

export type StrategyType = 'RollingUpdate' | 'Recreate';

export interface RolloutStrategy {
  type: StrategyType;
  rollingUpdate?: { maxSurge?: IntOrPercent; maxUnavailable?: IntOrPercent };
}

/** The parts of a BasicDeployment the rollout arithmetic needs. */
export interface DeploymentView {
  /** spec.replicas */
  replicas: number;
  strategy: RolloutStrategy;
  paused?: boolean;
  /** status.replicas; the fallback base for proportional scaling when a set has no max-replicas record. */
  statusReplicas?: number;
}

/** One BasicReplicaSet of a deployment, reduced to the numbers the rollout reads. */
export interface ReplicaSetView {
  name: string;
  /** spec.replicas */
  specReplicas: number;
  /** status.replicas: active pods (not terminating, not finished), as apps/v1 counts them. */
  statusReplicas: number;
  /** status.availableReplicas */
  availableReplicas: number;
  /** status.activeReplicas: pods not terminating and not finished. */
  activeReplicas?: number;
  /** status.terminatingReplicas: pods being deleted that have not finished yet. */
  terminatingReplicas?: number;
  creationTimestamp?: Timestamp;
  /** Deployment spec.replicas recorded on the set when it was last scaled ("desired-replicas"). */
  desiredReplicas?: number;
  /** Deployment spec.replicas + maxSurge recorded on the set when it was last scaled ("max-replicas"). */
  maxReplicas?: number;
}

/**
 * A planned change to one replica set: set spec.replicas to `to` and record `desiredReplicas` and
 * `maxReplicas` on it. `from === to` means only the recorded values need refreshing.
 */
export interface ScaleAction {
  name: string;
  from: number;
  to: number;
  desiredReplicas: number;
  maxReplicas: number;
}
