import type { V1Pod } from '@kubernetes/client-node';
import {
  BASIC_REPLICA_SET,
  type BasicReplicaSet,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
} from '../../apis/index.ts';
import { controllerReference } from '../../runtime/write/owner-refs.ts';

/** A new pod for `rs`: its template, our managed-by label (the pod cache only sees labeled pods), owned by `rs`. */
export function podForReplicaSet(rs: BasicReplicaSet): V1Pod {
  const template = rs.spec.template;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${rs.metadata.name}-`,
      namespace: rs.metadata.namespace,
      labels: { ...(template.metadata?.labels ?? {}), [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
      annotations: { ...(template.metadata?.annotations ?? {}) },
      ownerReferences: [controllerReference(rs, BASIC_REPLICA_SET)],
    },
    spec: structuredClone(template.spec),
  };
}
