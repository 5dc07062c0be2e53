import { ConfigError, type FlagReader, type FlagSpec } from '../runtime/manager/config.ts';

/**
 * The operator's own flags, beside the manager's: what the PodMachine and VolumeBackup controllers are
 * told about the Jobs that copy volumes.
 */
export const OPERATOR_FLAGS = {
  'backup-job-image': {
    type: 'string',
    default: 'ghcr.io/basicoperator/basic-operator:0.1.0',
    help: "Image of the Jobs that copy and verify volumes for backups and restores: the operator's own image (its mover).",
  },
  'volume-copy-deadline': {
    type: 'string',
    default: '1h',
    help: 'How long a VolumeBackup (all its copy attempts) or a restore Job may run before it fails.',
  },
} as const satisfies Record<string, FlagSpec>;

export interface OperatorOptions {
  /** Image of the Jobs that copy volumes for backups and restores. */
  backupJobImage: string;
  /** How long a VolumeBackup (all its copy attempts) or a restore Job may take before it fails. */
  volumeCopyDeadlineMs: number;
}

export function readOperatorFlags(flags: FlagReader<keyof typeof OPERATOR_FLAGS>): OperatorOptions {
  const volumeCopyDeadlineMs = flags.duration('volume-copy-deadline');
  // Job deadlines are whole seconds.
  if (volumeCopyDeadlineMs < 1000) {
    throw new ConfigError(
      `--volume-copy-deadline: "${flags.string('volume-copy-deadline')}" must be at least 1s`,
    );
  }
  return { backupJobImage: flags.string('backup-job-image'), volumeCopyDeadlineMs };
}
