import type { V1OwnerReference } from '@kubernetes/client-node';
import type { BasicReplicaSet } from '../../../src/apis/index.ts';

/** A BasicReplicaSet with the fields the controller's logic reads. */
export function replicaSet(
  name: string,
  labels: Record<string, string>,
  options: { uid?: string; owner?: string; namespace?: string } = {},
): BasicReplicaSet {
  const ownerReferences: V1OwnerReference[] | undefined = options.owner
    ? [
        {
          apiVersion: 'apps.basicoperator.dev/v1alpha1',
          kind: 'BasicDeployment',
          name: options.owner,
          uid: `uid-${options.owner}`,
          controller: true,
        },
      ]
    : undefined;
  return {
    apiVersion: 'apps.basicoperator.dev/v1alpha1',
    kind: 'BasicReplicaSet',
    metadata: {
      name,
      namespace: options.namespace ?? 'ns',
      uid: options.uid ?? `uid-${name}`,
      ownerReferences,
    },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'pause' }] } },
    },
  };
}
