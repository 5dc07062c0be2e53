// BasicReplicaSet: keeps a number of pods of one template running.
import type { V1LabelSelector, V1ListMeta, V1ObjectMeta } from '@kubernetes/client-node';
import { resourceOf } from '../../../runtime/client/resource.ts';
import type { ApiResource, Condition } from '../../meta.ts';
import { APPS_API_VERSION, APPS_GROUP, APPS_VERSION } from './group.ts';
import type { PodTemplate } from './workload.ts';

const basicReplicaSetResource = {
  group: APPS_GROUP,
  version: APPS_VERSION,
  apiVersion: APPS_API_VERSION,
  kind: 'BasicReplicaSet',
  listKind: 'BasicReplicaSetList',
  plural: 'basicreplicasets',
  singular: 'basicreplicaset',
  shortNames: ['brs'],
  namespaced: true,
} as const satisfies ApiResource;
export const BASIC_REPLICA_SET = resourceOf<BasicReplicaSet>()(basicReplicaSetResource);

export interface BasicReplicaSetSpec {
  /** Default 1. */
  replicas?: number;
  /** Immutable; must select `template.metadata.labels`. */
  selector: V1LabelSelector;
  template: PodTemplate;
  /** Seconds a ready pod must stay ready to count as available; default 0. */
  minReadySeconds?: number;
}

export type BasicReplicaSetConditionType = 'Ready' | 'ReplicaFailure';

export interface BasicReplicaSetStatus {
  /** Pods it counts: not terminating, not Succeeded or Failed. */
  activeReplicas?: number;
  /** The same count, as apps/v1 names it (read by the scale subresource). */
  replicas?: number;
  /** Pods being deleted that have not reached Succeeded or Failed. */
  terminatingReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
  /** The selector in label-query form, for the scale subresource. */
  selector?: string;
  conditions?: Condition[];
}

export interface BasicReplicaSet {
  apiVersion: typeof basicReplicaSetResource.apiVersion;
  kind: typeof basicReplicaSetResource.kind;
  metadata: V1ObjectMeta;
  spec: BasicReplicaSetSpec;
  status?: BasicReplicaSetStatus;
}

export interface BasicReplicaSetList {
  apiVersion: typeof basicReplicaSetResource.apiVersion;
  kind: typeof basicReplicaSetResource.listKind;
  metadata: V1ListMeta;
  items: BasicReplicaSet[];
}
