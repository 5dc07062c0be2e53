// The provider's own flags, beside the manager's, and its defaults for some of the manager's.
import { ConfigError, type FlagReader, type FlagSpec, type ManagerFlagDefaults } from './basic-operator.ts';
import type { ProviderOptions } from './deps.ts';

/** The provider's Lease when --leader-elect is on: not the operator's, so both can lead at once. */
export const LEASE_NAME = 'statefulset-provider.examples.basicoperator.dev';

export const MANAGER_DEFAULTS: ManagerFlagDefaults = { 'leader-election-id': LEASE_NAME };

export const PROVIDER_FLAGS = {
  'restore-job-image': {
    type: 'string',
    default: 'ghcr.io/basicoperator/basic-operator:0.1.0',
    help: "Image of the Jobs that copy a VolumeBackup into a new claim and verify it: basic-operator's own image (its mover), of the operator's version.",
  },
  'restore-deadline': {
    type: 'string',
    default: '1h',
    help: 'How long a restore Job may run before the restore fails.',
  },
} as const satisfies Record<string, FlagSpec>;

export function readProviderFlags(flags: FlagReader<keyof typeof PROVIDER_FLAGS>): ProviderOptions {
  const deadlineMs = flags.duration('restore-deadline');
  // Job deadlines are whole seconds.
  if (deadlineMs < 1000) {
    throw new ConfigError(`--restore-deadline: "${flags.string('restore-deadline')}" must be at least 1s`);
  }
  return {
    restoreJobImage: flags.string('restore-job-image'),
    restoreDeadlineSeconds: Math.ceil(deadlineMs / 1000),
  };
}
