// The openAPIV3Schema of BasicReplicaSet.
import { conditionsSchema, observedGenerationSchema, rootSchema } from '../../common-schemas.ts';
import type { JsonSchemaProps } from '../../json-schema.ts';
import { RULES } from '../../rules.ts';
import {
  labelSelectorSchema,
  MAX_REPLICA_SET_LABELS,
  minReadySecondsSchema,
  podTemplateSchema,
  replicaCountSchema,
  replicasSpecSchema,
  statusSelectorSchema,
} from './workload-schemas.ts';

const specSchema: JsonSchemaProps = {
  type: 'object',
  required: ['selector', 'template'],
  properties: {
    replicas: replicasSpecSchema,
    selector: labelSelectorSchema(MAX_REPLICA_SET_LABELS),
    template: podTemplateSchema(MAX_REPLICA_SET_LABELS),
    minReadySeconds: minReadySecondsSchema,
  },
  'x-kubernetes-validations': [RULES.selectorMatchesTemplate],
};

const statusSchema: JsonSchemaProps = {
  type: 'object',
  properties: {
    activeReplicas: {
      ...replicaCountSchema,
      description: 'Pods it counts: not terminating, not Succeeded or Failed.',
    },
    replicas: {
      ...replicaCountSchema,
      description:
        'Active pods (the same count as activeReplicas), as apps/v1 ReplicaSet reports them; read by the scale subresource.',
    },
    terminatingReplicas: {
      ...replicaCountSchema,
      description: 'Pods being deleted (a deletionTimestamp) that have not reached Succeeded or Failed.',
    },
    readyReplicas: replicaCountSchema,
    availableReplicas: replicaCountSchema,
    observedGeneration: observedGenerationSchema,
    selector: statusSelectorSchema,
    conditions: conditionsSchema,
  },
};

export const basicReplicaSetSchema: JsonSchemaProps = rootSchema({
  description: 'BasicReplicaSet keeps a number of pods of one template running.',
  spec: specSchema,
  status: statusSchema,
});
