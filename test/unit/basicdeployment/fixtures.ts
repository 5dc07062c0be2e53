import type { IntOrPercent } from '../../../src/controllers/basicdeployment/logic/int-or-percent.ts';
import type { DeploymentView, ReplicaSetView } from '../../../src/controllers/basicdeployment/logic/types.ts';

export function rollingDeployment(
  replicas: number,
  maxSurge: IntOrPercent,
  maxUnavailable: IntOrPercent,
  extra: Partial<DeploymentView> = {},
): DeploymentView {
  return {
    replicas,
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge, maxUnavailable } },
    ...extra,
  };
}

export function recreateDeployment(replicas: number): DeploymentView {
  return { replicas, strategy: { type: 'Recreate' } };
}

/** A set whose pods all exist and are available unless `extra` says otherwise. */
export function replicaSet(
  name: string,
  specReplicas: number,
  extra: Partial<ReplicaSetView> = {},
): ReplicaSetView {
  return { name, specReplicas, statusReplicas: specReplicas, availableReplicas: specReplicas, ...extra };
}

export const olderTime = '2016-05-20T00:00:00Z';
export const oldTime = '2016-05-20T01:00:00Z';
export const newTime = '2016-05-20T02:00:00Z';
