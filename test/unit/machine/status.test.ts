import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Condition, InfrastructureView, MachineStatus } from '../../../src/apis/index.ts';
import {
  computeStatus,
  type Infrastructure,
  infrastructureVerdict,
  type MachineObservation,
  machinePhase,
} from '../../../src/controllers/machine/status.ts';

const NOW = new Date('2026-01-01T00:00:00Z');
const REF = { apiVersion: 'cloud.example.dev/v1', kind: 'CloudMachine', name: 'vm-1' };

const provider = (view: Partial<InfrastructureView>): Infrastructure => ({
  kind: 'provider',
  name: 'CloudMachine vm-1',
  view: { ready: false, stopped: false, ...view },
});

const obs = (
  infrastructure: Infrastructure,
  extra: Partial<MachineObservation> = {},
): MachineObservation => ({
  generation: 4,
  ref: REF,
  infrastructure,
  ...extra,
});

const condition = (status: MachineStatus, type: string): Condition | undefined =>
  status.conditions?.find((c) => c.type === type);

describe('machinePhase', () => {
  const cases: Array<[string, Infrastructure, string]> = [
    ['waiting for the backup finalizer', { kind: 'blocked', message: 'm' }, 'Pending'],
    [
      'the object does not exist',
      { kind: 'problem', reason: 'InfrastructureNotFound', message: 'm' },
      'Pending',
    ],
    ['no contract', { kind: 'problem', reason: 'ContractNotDeclared', message: 'm' }, 'Failed'],
    ['another namespace', { kind: 'problem', reason: 'CrossNamespaceReference', message: 'm' }, 'Failed'],
    ['owned by another', { kind: 'problem', reason: 'InfrastructureOwnedByOther', message: 'm' }, 'Failed'],
    ['a contract violation', { kind: 'problem', reason: 'ContractViolation', message: 'm' }, 'Failed'],
    ['forbidden', { kind: 'problem', reason: 'InfrastructureForbidden', message: 'm' }, 'Failed'],
    ['not ready yet', provider({}), 'Provisioning'],
    ['ready', provider({ ready: true }), 'Running'],
    [
      'a terminal failure',
      provider({ ready: true, failure: { reason: 'ImageGone', message: 'm' } }),
      'Failed',
    ],
  ];
  for (const [what, infrastructure, phase] of cases) {
    it(`${what}: ${phase}`, () => assert.equal(machinePhase(obs(infrastructure)), phase));
  }

  it('being deleted: Stopping until the provider stopped, then Stopped, whatever the provider says', () => {
    assert.equal(
      machinePhase(obs(provider({ ready: true }), { deleting: { stopped: false, message: 'm' } })),
      'Stopping',
    );
    assert.equal(
      machinePhase(obs({ kind: 'absent', message: 'm' }, { deleting: { stopped: true, message: 'm' } })),
      'Stopped',
    );
  });
});

describe('infrastructureVerdict', () => {
  it("mirrors the provider's readiness, reason and message, prefixed with its kind and name", () => {
    assert.deepEqual(
      infrastructureVerdict(provider({ ready: true, reason: 'PodReady', message: 'pod web runs' })),
      {
        status: 'True',
        reason: 'PodReady',
        message: 'CloudMachine vm-1: pod web runs',
      },
    );
    assert.deepEqual(infrastructureVerdict(provider({ reason: 'PodPending', message: 'pulling' })), {
      status: 'False',
      reason: 'PodPending',
      message: 'CloudMachine vm-1: pulling',
    });
  });

  it('without a reason of its own (status.ready only), or one the API server would refuse: ours', () => {
    assert.deepEqual(infrastructureVerdict(provider({})), {
      status: 'False',
      reason: 'WaitingForInfrastructure',
      message: 'CloudMachine vm-1: not ready yet',
    });
    assert.equal(infrastructureVerdict(provider({ ready: true })).reason, 'InfrastructureReady');
    assert.equal(
      infrastructureVerdict(provider({ reason: 'not a reason!' })).reason,
      'WaitingForInfrastructure',
    );
  });

  it('a terminal failure: InfrastructureFailed with the provider reason and message', () => {
    assert.deepEqual(
      infrastructureVerdict(provider({ failure: { reason: 'ImageGone', message: 'no such image' } })),
      {
        status: 'False',
        reason: 'InfrastructureFailed',
        message: 'CloudMachine vm-1 failed: ImageGone: no such image',
      },
    );
  });
});

describe('computeStatus', () => {
  it('copies providerID, addresses and volumes; Ready follows InfrastructureReady', () => {
    const view: Partial<InfrastructureView> = {
      ready: true,
      reason: 'PodReady',
      message: 'running',
      providerID: 'pod://ns/web',
      addresses: [{ type: 'InternalIP', address: '10.0.0.7' }],
      volumes: [{ name: 'data', claimName: 'web-data', phase: 'Bound' }],
    };
    const status = computeStatus(undefined, obs(provider(view)), NOW);
    assert.deepEqual(status, {
      phase: 'Running',
      ready: true,
      infrastructureRef: REF,
      providerID: 'pod://ns/web',
      addresses: [{ type: 'InternalIP', address: '10.0.0.7' }],
      volumes: [{ name: 'data', claimName: 'web-data', phase: 'Bound' }],
      observedGeneration: 4,
      conditions: [
        {
          type: 'InfrastructureReady',
          status: 'True',
          reason: 'PodReady',
          message: 'CloudMachine vm-1: running',
          observedGeneration: 4,
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
        {
          type: 'Ready',
          status: 'True',
          reason: 'InfrastructureReady',
          message: 'CloudMachine vm-1: running',
          observedGeneration: 4,
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    });
  });

  it("not ready: Ready says what the Machine waits for, with the provider's reason", () => {
    const status = computeStatus(undefined, obs(provider({ reason: 'PodPending', message: 'pulling' })), NOW);
    assert.equal(status.ready, false);
    assert.deepEqual(
      [condition(status, 'Ready')?.reason, condition(status, 'Ready')?.message],
      ['PodPending', 'CloudMachine vm-1: pulling'],
    );
  });

  it('without a provider object to read, keeps the volumes last copied and drops providerID and addresses', () => {
    const before: MachineStatus = {
      providerID: 'pod://ns/web',
      addresses: [{ type: 'InternalIP', address: '10.0.0.7' }],
      volumes: [{ name: 'data', claimName: 'web-data' }],
    };
    const status = computeStatus(
      before,
      obs({ kind: 'problem', reason: 'InfrastructureForbidden', message: 'no' }),
      NOW,
    );
    assert.deepEqual(status.volumes, [{ name: 'data', claimName: 'web-data' }]);
    assert.equal(status.providerID, undefined);
    assert.equal(status.addresses, undefined);
  });

  it("copies the provider's copyAs, drops it when the provider stops reporting it, keeps it while it cannot be read", () => {
    const copyAs = { runAsUser: 999, runAsGroup: 999, fsGroup: 999 };
    const reported = computeStatus(undefined, obs(provider({ copyAs })), NOW);
    assert.deepEqual(reported.copyAs, copyAs);
    const dropped = computeStatus(reported, obs(provider({})), NOW);
    assert.equal('copyAs' in dropped, false, 'a provider that no longer reports it: the copies run as 65532');
    for (const gone of [
      { kind: 'problem', reason: 'InfrastructureForbidden', message: 'no' },
      { kind: 'absent', message: 'the provider object is gone' },
    ] as const) {
      const kept = computeStatus(reported, obs(gone, { deleting: { stopped: true, message: 'm' } }), NOW);
      assert.deepEqual(
        kept.copyAs,
        copyAs,
        `${gone.kind}: a backup after the deletion still copies as the workload`,
      );
    }
  });

  it("leaves other controllers' conditions out and keeps lastTransitionTime while the status holds", () => {
    const first = computeStatus(undefined, obs(provider({})), NOW);
    const theirs: Condition = {
      type: 'VolumeBackup',
      status: 'False',
      reason: 'BackupPending',
      message: 'm',
      lastTransitionTime: '2025-01-01T00:00:00Z',
    };
    const later = new Date(NOW.getTime() + 60_000);
    const next = computeStatus(
      { ...first, conditions: [...(first.conditions ?? []), theirs] },
      obs(provider({ reason: 'PodPending', message: 'still pulling' })),
      later,
    );
    assert.deepEqual(
      next.conditions?.map((c) => `${c.type} ${c.lastTransitionTime}`),
      ['InfrastructureReady 2026-01-01T00:00:00Z', 'Ready 2026-01-01T00:00:00Z'],
    );
  });

  it('being deleted: Ready False, Stopping then Stopped, with what it waits for', () => {
    const stopping = computeStatus(
      undefined,
      obs(provider({ ready: true }), { deleting: { stopped: false, message: 'waiting for it to stop' } }),
      NOW,
    );
    assert.equal(stopping.phase, 'Stopping');
    assert.equal(stopping.ready, false);
    assert.deepEqual(
      [condition(stopping, 'Ready')?.reason, condition(stopping, 'Ready')?.message],
      ['Stopping', 'waiting for it to stop'],
    );
    const stopped = computeStatus(
      stopping,
      obs(provider({ stopped: true }), { deleting: { stopped: true, message: 'stopped' } }),
      NOW,
    );
    assert.equal(stopped.phase, 'Stopped');
    assert.equal(condition(stopped, 'Ready')?.reason, 'Stopped');
  });
});

describe('kstatus Stalled', () => {
  it("is set with InfrastructureReady's reason while the Machine is Failed", () => {
    const failed = computeStatus(
      undefined,
      obs(provider({ failure: { reason: 'PodFailed', message: 'pod web has failed' } })),
      NOW,
    );
    assert.deepEqual(condition(failed, 'Stalled'), {
      type: 'Stalled',
      status: 'True',
      reason: 'InfrastructureFailed',
      message: 'CloudMachine vm-1 failed: PodFailed: pod web has failed',
      observedGeneration: 4,
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
    const forbidden = computeStatus(
      undefined,
      obs({ kind: 'problem', reason: 'ContractNotDeclared', message: 'no contract label' }),
      NOW,
    );
    assert.equal(condition(forbidden, 'Stalled')?.reason, 'ContractNotDeclared');
  });

  it('is absent while provisioning, waiting or running, and dropped once the failure is gone', () => {
    for (const infrastructure of [
      provider({}),
      provider({ ready: true }),
      { kind: 'blocked', message: 'm' } as const,
      { kind: 'problem', reason: 'InfrastructureNotFound', message: 'm' } as const,
    ]) {
      assert.equal(condition(computeStatus(undefined, obs(infrastructure), NOW), 'Stalled'), undefined);
    }
    const failed = computeStatus(
      undefined,
      obs(provider({ failure: { reason: 'PodFailed', message: 'm' } })),
      NOW,
    );
    const recovered = computeStatus(failed, obs(provider({ ready: true })), NOW);
    assert.equal(condition(recovered, 'Stalled'), undefined);
  });

  it('is absent while the Machine is being deleted (kstatus reads the deletion first)', () => {
    const status = computeStatus(
      undefined,
      obs(provider({ failure: { reason: 'PodFailed', message: 'm' } }), {
        deleting: { stopped: false, message: 'm' },
      }),
      NOW,
    );
    assert.equal(condition(status, 'Stalled'), undefined);
  });
});
