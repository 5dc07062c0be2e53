// The openAPIV3Schema of VolumeBackup.
import {
  conditionsSchema,
  dnsLabelSchema,
  objectNameSchema,
  observedGenerationSchema,
  rootSchema,
  timestampSchema,
} from '../../common-schemas.ts';
import type { JsonSchemaProps } from '../../json-schema.ts';
import { RULES } from '../../rules.ts';
import { VOLUME_BACKUP_PHASES } from './volumebackup.ts';

const MAX_VOLUMES = 16;

const specSchema: JsonSchemaProps = {
  type: 'object',
  description: 'Immutable.',
  required: ['machineName', 'machineUID', 'volumes'],
  properties: {
    machineName: objectNameSchema,
    machineUID: { type: 'string', minLength: 1, maxLength: 128 },
    volumes: {
      type: 'array',
      maxItems: MAX_VOLUMES,
      items: {
        type: 'object',
        required: ['name', 'claimName'],
        properties: {
          name: dnsLabelSchema,
          claimName: objectNameSchema,
        },
      },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
    },
  },
  'x-kubernetes-validations': [RULES.volumeBackupSpecImmutable],
};

const statusSchema: JsonSchemaProps = {
  type: 'object',
  properties: {
    phase: { type: 'string', enum: VOLUME_BACKUP_PHASES },
    startTime: timestampSchema,
    completionTime: timestampSchema,
    volumes: {
      type: 'array',
      maxItems: MAX_VOLUMES,
      items: {
        type: 'object',
        required: ['name', 'backupClaimName'],
        properties: {
          name: { type: 'string' },
          backupClaimName: { type: 'string' },
        },
      },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
    },
    attempts: { type: 'integer', format: 'int32', minimum: 0, description: 'Copy Jobs started so far.' },
    observedGeneration: observedGenerationSchema,
    conditions: conditionsSchema,
  },
};

export const volumeBackupSchema: JsonSchemaProps = rootSchema({
  description: "VolumeBackup holds copies of a deleted Machine's volumes. It outlives the Machine.",
  spec: specSchema,
  status: statusSchema,
});
