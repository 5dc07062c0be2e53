// The openAPIV3Schema of BasicDeployment.
import { conditionsSchema, int32Schema, observedGenerationSchema, rootSchema } from '../../common-schemas.ts';
import type { JsonSchemaProps } from '../../json-schema.ts';
import { RULES } from '../../rules.ts';
import {
  labelSelectorSchema,
  MAX_DEPLOYMENT_LABELS,
  minReadySecondsSchema,
  podTemplateSchema,
  replicaCountSchema,
  replicasSpecSchema,
  statusSelectorSchema,
} from './workload-schemas.ts';

const DEFAULT_ROLLING_UPDATE = { maxSurge: '25%', maxUnavailable: '25%' } as const;

/** A non-negative integer or a percentage such as "25%". */
const intOrPercentSchema = (options: { description: string; maxPercent?: 100 }): JsonSchemaProps => ({
  anyOf: [{ type: 'integer' }, { type: 'string' }],
  'x-kubernetes-int-or-string': true,
  description: options.description,
  minimum: 0,
  maximum: 2147483647,
  maxLength: 10,
  pattern: options.maxPercent === 100 ? '^(100|[1-9]?[0-9])%$' : '^(0|[1-9][0-9]{0,8})%$',
  default: '25%',
});

const rollingUpdateSchema: JsonSchemaProps = {
  type: 'object',
  properties: {
    maxSurge: intOrPercentSchema({
      description: 'Pods allowed above replicas during an update: a count or a percentage (rounded up).',
    }),
    maxUnavailable: intOrPercentSchema({
      description:
        'Pods allowed to be unavailable during an update: a count or a percentage up to 100% (rounded down).',
      maxPercent: 100,
    }),
  },
  'x-kubernetes-validations': [RULES.surgeOrUnavailableNonZero],
};

const strategySchema: JsonSchemaProps = {
  type: 'object',
  description: 'How pods of an old template are replaced.',
  // Nested defaults only apply to an object that exists, so the whole strategy has a default too.
  default: { type: 'RollingUpdate', rollingUpdate: DEFAULT_ROLLING_UPDATE },
  properties: {
    type: { type: 'string', enum: ['RollingUpdate', 'Recreate'], default: 'RollingUpdate' },
    rollingUpdate: rollingUpdateSchema,
  },
  // rollingUpdate is accepted and ignored under Recreate: a switch to Recreate by `kubectl apply` or
  // `helm upgrade` is a JSON merge patch, which keeps the defaulted rollingUpdate (apps/v1 drops it
  // through strategic merge's retainKeys, which custom resources do not get).
};

const specSchema: JsonSchemaProps = {
  type: 'object',
  required: ['selector', 'template'],
  properties: {
    replicas: replicasSpecSchema,
    selector: labelSelectorSchema(MAX_DEPLOYMENT_LABELS),
    template: podTemplateSchema(MAX_DEPLOYMENT_LABELS),
    strategy: strategySchema,
    minReadySeconds: minReadySecondsSchema,
    revisionHistoryLimit: {
      ...int32Schema(0),
      default: 10,
      description: 'Old BasicReplicaSets to keep for rollback. Default 10.',
    },
    progressDeadlineSeconds: {
      ...int32Schema(1),
      default: 600,
      description: 'Seconds without progress before the Progressing condition turns False. Default 600.',
    },
    paused: { type: 'boolean', default: false, description: 'Stops rollouts while true. Default false.' },
  },
  'x-kubernetes-validations': [RULES.selectorMatchesTemplate, RULES.progressDeadlineExceedsMinReady],
};

const statusSchema: JsonSchemaProps = {
  type: 'object',
  properties: {
    ready: {
      type: 'boolean',
      description:
        'True when every desired replica runs the current template and is available, and no pod of an older template is left.',
    },
    observedGeneration: observedGenerationSchema,
    replicas: replicaCountSchema,
    updatedReplicas: replicaCountSchema,
    readyReplicas: replicaCountSchema,
    availableReplicas: replicaCountSchema,
    unavailableReplicas: replicaCountSchema,
    terminatingReplicas: {
      ...replicaCountSchema,
      description: 'Pods of its sets being deleted that have not finished yet (not counted in replicas).',
    },
    selector: statusSelectorSchema,
    collisionCount: {
      type: 'integer',
      format: 'int32',
      minimum: 0,
      description:
        'Bumped when the name of a new BasicReplicaSet collides with an existing one; mixed into the template hash.',
    },
    lastProgressTime: {
      type: 'string',
      format: 'date-time',
      description:
        'When the rollout last made progress; the progress deadline counts from here (metav1.Condition has no lastUpdateTime).',
    },
    conditions: conditionsSchema,
  },
};

export const basicDeploymentSchema: JsonSchemaProps = rootSchema({
  description: 'BasicDeployment rolls a pod template out through BasicReplicaSets.',
  spec: specSchema,
  status: statusSchema,
  rules: [RULES.basicDeploymentNameLength],
});
