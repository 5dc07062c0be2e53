import type { V1Pod } from '@kubernetes/client-node';
import {
  BASIC_REPLICA_SET,
  type BasicReplicaSet,
  REPLICA_SET_POD_LABEL,
  REPLICA_SET_POD_VALUE,
} from '../../../apis/index.ts';
import { controllerReference } from '../../../runtime/write/owner-refs.ts';

/**
 * A new pod for `rs`, owned by it: the template's labels exactly as written (as apps/v1 copies them)
 * plus our marker label, which is how the pod cache finds the pods this controller manages. The
 * schema refuses the marker key in a template or selector, so the marker never overwrites a label of
 * the user's and never changes whether the pod matches the selector.
 */
export function podForReplicaSet(rs: BasicReplicaSet): V1Pod {
  const template = rs.spec.template;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${rs.metadata.name}-`,
      namespace: rs.metadata.namespace,
      labels: { ...(template.metadata?.labels ?? {}), [REPLICA_SET_POD_LABEL]: REPLICA_SET_POD_VALUE },
      annotations: { ...(template.metadata?.annotations ?? {}) },
      ownerReferences: [controllerReference(rs, BASIC_REPLICA_SET)],
    },
    spec: structuredClone(template.spec),
  };
}
