import type { V1Deployment } from '@kubernetes/client-node';
import { BASIC_DEPLOYMENT, BASIC_REPLICA_SET, type BasicDeployment } from '../../src/apis/index.ts';
import type { KubeObject } from '../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../../src/runtime/client/resource.ts';
import type { ScalableObject } from '../measure/scale-ups.ts';

/** What the soak reads of a deployment of either kind. */
export type SoakDeployment = KubeObject & {
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
  };
};

/**
 * The kinds both tenants work with: the operator's BasicDeployments, or apps/v1 Deployments handled
 * by the cluster's kube-controller-manager, the reference the operator is measured against beside
 * the same tenant.
 */
export interface SoakKinds {
  readonly deployments: ResourceType<SoakDeployment>;
  readonly sets: ResourceType<ScalableObject>;
  /** Rolled out for `generation` or a later one: every replica updated and available, no older pod left. */
  readyAt(deployment: SoakDeployment | undefined, generation: number): boolean;
}

export const OPERATOR_KINDS: SoakKinds = {
  deployments: BASIC_DEPLOYMENT as ResourceType<SoakDeployment>,
  sets: BASIC_REPLICA_SET,
  readyAt: (d, generation) => {
    const status = (d as BasicDeployment | undefined)?.status;
    return status?.ready === true && (status.observedGeneration ?? 0) >= generation;
  },
};

export const KCM_KINDS: SoakKinds = {
  deployments: CoreTypes.Deployment as ResourceType<SoakDeployment>,
  sets: CoreTypes.ReplicaSet,
  // apps/v1's own test of a finished rollout (kubectl rollout status).
  readyAt: (d, generation) => {
    const status = (d as V1Deployment | undefined)?.status;
    const replicas = d?.spec?.replicas ?? 1;
    return (
      (status?.observedGeneration ?? 0) >= generation &&
      status?.updatedReplicas === replicas &&
      status?.availableReplicas === replicas &&
      status?.replicas === replicas
    );
  },
};
