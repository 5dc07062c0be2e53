// The openAPIV3Schema of PodMachine.
import { conditionsSchema, observedGenerationSchema, rootSchema } from '../../common-schemas.ts';
import type { JsonSchemaProps } from '../../json-schema.ts';
import { RULES } from '../../rules.ts';
import { MACHINE_PHASES } from './machine.ts';
import {
  addressesSchema,
  containerFieldsSchema,
  copyAsStatusSchema,
  volumeStatusesSchema,
  volumesSchema,
} from './machine-schema.ts';
import { podFieldsSchema } from './pod-fields-schema.ts';

const specSchema: JsonSchemaProps = {
  type: 'object',
  required: ['image'],
  properties: { ...containerFieldsSchema, volumes: volumesSchema, ...podFieldsSchema },
  'x-kubernetes-validations': [RULES.podMachineSpecImmutable],
};

const statusSchema: JsonSchemaProps = {
  type: 'object',
  properties: {
    phase: { type: 'string', enum: MACHINE_PHASES },
    ready: { type: 'boolean', description: 'The pod runs and is Ready, and every claim is Bound.' },
    providerID: { type: 'string', maxLength: 512 },
    addresses: addressesSchema,
    volumes: volumeStatusesSchema,
    copyAs: {
      ...copyAsStatusSchema,
      description:
        "The contract's copyAs: the pod's runAsUser, runAsGroup and fsGroup (spec.podSecurityContext over the defaults, 65532 each); absent when it runs as root.",
    },
    stopped: {
      type: 'boolean',
      description: 'After a stop request: no pod runs any more and every claim is kept.',
    },
    failureReason: { type: 'string', maxLength: 1024 },
    failureMessage: { type: 'string', maxLength: 32768 },
    observedGeneration: observedGenerationSchema,
    conditions: conditionsSchema,
  },
};

export const podMachineSchema: JsonSchemaProps = rootSchema({
  description:
    'PodMachine realizes a Machine as one pod plus one PersistentVolumeClaim per volume (a provider of the Machine infrastructure contract v1).',
  spec: specSchema,
  status: statusSchema,
});
