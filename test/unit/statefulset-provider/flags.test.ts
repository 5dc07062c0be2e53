// The provider's command line: its own flags and its defaults for the manager's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  LEASE_NAME,
  MANAGER_DEFAULTS,
  PROVIDER_FLAGS,
  readProviderFlags,
} from '../../../examples/statefulset-provider/src/flags.ts';
import { FLAGS, parseCommandLine } from '../../../src/runtime/manager/config.ts';

function parse(argv: string[]) {
  const parsed = parseCommandLine(argv, {}, PROVIDER_FLAGS, MANAGER_DEFAULTS);
  if (parsed === 'help') throw new Error('unexpected help');
  return parsed;
}

describe('statefulset-provider flags', () => {
  it("holds a Lease of its own, not the operator's", () => {
    const { config } = parse(['--leader-elect']);
    assert.equal(config.leaderElection.enabled, true);
    assert.equal(config.leaderElection.id, LEASE_NAME);
    assert.notEqual(LEASE_NAME, FLAGS['leader-election-id'].default);
  });

  it("reads the restore image (basic-operator's own, whose mover copies) and deadline", () => {
    assert.deepEqual(readProviderFlags(parse([]).flags), {
      restoreJobImage: 'ghcr.io/basicoperator/basic-operator:0.1.0',
      restoreDeadlineSeconds: 3600,
    });
    assert.deepEqual(
      readProviderFlags(parse(['--restore-job-image', 'alpine:3', '--restore-deadline', '90s']).flags),
      {
        restoreJobImage: 'alpine:3',
        restoreDeadlineSeconds: 90,
      },
    );
    assert.throws(
      () => readProviderFlags(parse(['--restore-deadline', '10ms']).flags),
      /must be at least 1s/,
    );
  });
});
