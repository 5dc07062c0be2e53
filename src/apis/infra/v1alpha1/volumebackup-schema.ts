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

const manifestSchema: JsonSchemaProps = {
  type: 'object',
  description:
    "The verified copy: the backup claim's manifest, equal to the source's (files, bytes, one digest over every entry).",
  required: ['files', 'bytes', 'digest'],
  properties: {
    files: { type: 'integer', format: 'int64', minimum: 0 },
    bytes: { type: 'integer', format: 'int64', minimum: 0 },
    digest: { type: 'string', maxLength: 80, pattern: '^sha256:[0-9a-f]{64}$' },
  },
};

const specSchema: JsonSchemaProps = {
  type: 'object',
  description:
    'Immutable. machineName and machineUID go together: a backup of that Machine (only the operator records those), or, both absent, a standalone backup of claims of the namespace.',
  required: ['volumes'],
  properties: {
    machineName: objectNameSchema,
    machineUID: { type: 'string', minLength: 1, maxLength: 128 },
    volumes: {
      type: 'array',
      minItems: 1,
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
  'x-kubernetes-validations': [RULES.volumeBackupSpecImmutable, RULES.volumeBackupMachineComplete],
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
          name: { type: 'string', maxLength: 63 },
          backupClaimName: { type: 'string', maxLength: 253 },
          manifest: manifestSchema,
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
