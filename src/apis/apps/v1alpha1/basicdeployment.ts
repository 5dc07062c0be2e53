// BasicDeployment: rolls a pod template out through BasicReplicaSets.
import type { V1LabelSelector, V1ListMeta, V1ObjectMeta } from '@kubernetes/client-node';
import { resourceOf } from '../../../runtime/client/resource.ts';
import type { ApiResource, Condition } from '../../meta.ts';
import { APPS_API_VERSION, APPS_GROUP, APPS_VERSION } from './group.ts';
import type { IntOrString, PodTemplate } from './workload.ts';

const basicDeploymentResource = {
  group: APPS_GROUP,
  version: APPS_VERSION,
  apiVersion: APPS_API_VERSION,
  kind: 'BasicDeployment',
  listKind: 'BasicDeploymentList',
  plural: 'basicdeployments',
  singular: 'basicdeployment',
  shortNames: ['bdeploy', 'bd'],
  namespaced: true,
} as const satisfies ApiResource;
export const BASIC_DEPLOYMENT = resourceOf<BasicDeployment>()(basicDeploymentResource);

export type DeploymentStrategyType = 'RollingUpdate' | 'Recreate';

export interface RollingUpdateStrategy {
  /** Pods allowed above `replicas` during an update; default "25%", rounded up. */
  maxSurge?: IntOrString;
  /** Pods allowed to be unavailable during an update; default "25%", rounded down. */
  maxUnavailable?: IntOrString;
}

export interface DeploymentStrategy {
  /** Default RollingUpdate. */
  type?: DeploymentStrategyType;
  /** Used with type RollingUpdate; accepted and ignored with Recreate. */
  rollingUpdate?: RollingUpdateStrategy;
}

export interface BasicDeploymentSpec {
  /** Default 1. */
  replicas?: number;
  /** Immutable; must select `template.metadata.labels`. */
  selector: V1LabelSelector;
  template: PodTemplate;
  /** Default {type: RollingUpdate, rollingUpdate: {maxSurge: "25%", maxUnavailable: "25%"}}. */
  strategy?: DeploymentStrategy;
  /** Seconds a ready pod must stay ready to count as available; default 0. */
  minReadySeconds?: number;
  /** Old BasicReplicaSets kept for rollback; default 10. */
  revisionHistoryLimit?: number;
  /** Seconds without progress before Progressing turns False; default 600. */
  progressDeadlineSeconds?: number;
  /** Default false. */
  paused?: boolean;
}

export type BasicDeploymentConditionType = 'Available' | 'Progressing' | 'Ready' | 'ReplicaFailure';

export interface BasicDeploymentStatus {
  /** Every desired replica runs the current template and is available, and no older pod is left. */
  ready?: boolean;
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  /** The sets' spec.replicas minus availableReplicas (upstream's formula), never negative. */
  unavailableReplicas?: number;
  /** Pods of its sets being deleted that have not finished yet (not counted in replicas). */
  terminatingReplicas?: number;
  /** The selector in label-query form, for the scale subresource. */
  selector?: string;
  /** Bumped on a BasicReplicaSet name collision; mixed into the template hash. */
  collisionCount?: number;
  /** RFC 3339 time the rollout last made progress; the progress deadline counts from here. */
  lastProgressTime?: string;
  conditions?: Condition[];
}

export interface BasicDeployment {
  apiVersion: typeof basicDeploymentResource.apiVersion;
  kind: typeof basicDeploymentResource.kind;
  metadata: V1ObjectMeta;
  spec: BasicDeploymentSpec;
  status?: BasicDeploymentStatus;
}

export interface BasicDeploymentList {
  apiVersion: typeof basicDeploymentResource.apiVersion;
  kind: typeof basicDeploymentResource.listKind;
  metadata: V1ListMeta;
  items: BasicDeployment[];
}
