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

/** As core/v1 validates a pod's user and group ids (0 to 2^31-1), kept int64 as there. */
const idSchema = (minimum: number, description: string): JsonSchemaProps => ({
  type: 'integer',
  format: 'int64',
  minimum,
  maximum: 2147483647,
  description,
});

const copyAsSchema: JsonSchemaProps = {
  type: 'object',
  description:
    "Whom the copies run as where the namespace's Pod Security level refuses a root copy (a root copy keeps every owner and is used wherever admitted). Default: uid and gid 65532, no fsGroup. The machine-backup controller sets it from the Machine's status.copyAs: whom its provider reports its pod runs as.",
  required: ['runAsUser', 'runAsGroup'],
  properties: {
    runAsUser: idSchema(1, "The copy pod's runAsUser; not root."),
    runAsGroup: idSchema(0, "The copy pod's runAsGroup."),
    fsGroup: idSchema(
      0,
      "The workload pod's fsGroup: a group of the copy, and the kubelet prepares the target claim's root with it as it did the workload's (the source is mounted read-only, which no fsGroup changes).",
    ),
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
    copyAs: copyAsSchema,
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
