// The PodMachine's status from its observations (pure): phase, readiness, the contract's fields, and
// which failures are terminal (failureReason) or transient (a Ready=False reason only).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isViolation, readInfrastructure } from '../../../src/apis/index.ts';
import {
  computeStatus,
  type PodMachineObservations,
  type PodObservation,
  podMachinePhase,
  type VolumeObservation,
  volumesVerdict,
} from '../../../src/controllers/podmachine/status.ts';

const NOW = new Date('2026-01-01T00:00:00Z');
const bound = (name: string): VolumeObservation => ({
  name,
  claimName: `web-${name}`,
  claimPhase: 'Bound',
  restore: { kind: 'none' },
});
const runningPod: PodObservation = {
  name: 'web',
  exists: true,
  terminating: false,
  phase: 'Running',
  ready: true,
  addresses: [{ type: 'InternalIP', address: '10.0.0.7' }],
};
const noPod: PodObservation = { name: 'web', exists: false, terminating: false, ready: false, addresses: [] };

function obs(overrides: Partial<PodMachineObservations> = {}): PodMachineObservations {
  return {
    namespace: 'ns',
    generation: 1,
    stopRequested: false,
    stopped: false,
    volumes: [bound('data'), bound('logs')],
    pod: runningPod,
    ...overrides,
  };
}

const ready = (o: PodMachineObservations) =>
  computeStatus(undefined, o, NOW).conditions?.find((c) => c.type === 'Ready');

describe('Ready of a Pending pod', () => {
  it('says why the pod does not run, when its status says', () => {
    const waiting = 'container machine is waiting: CreateContainerConfigError (secret "db" not found)';
    const pending = { ...runningPod, phase: 'Pending', ready: false };
    assert.deepEqual(
      [
        ready(obs({ pod: { ...pending, pending: waiting } }))?.reason,
        ready(obs({ pod: { ...pending, pending: waiting } }))?.message,
      ],
      ['PodPending', `pod web is Pending: ${waiting}`],
    );
    assert.equal(ready(obs({ pod: pending }))?.message, 'pod web is Pending');
  });
});

describe('podMachinePhase', () => {
  it('goes Pending -> Provisioning -> Running', () => {
    const pendingClaim = { ...bound('data'), claimPhase: 'Pending' };
    assert.equal(podMachinePhase(obs({ volumes: [pendingClaim], pod: noPod })), 'Pending');
    assert.equal(podMachinePhase(obs({ pod: noPod })), 'Provisioning');
    assert.equal(
      podMachinePhase(obs({ pod: { ...runningPod, phase: 'Pending', ready: false } })),
      'Provisioning',
    );
    assert.equal(podMachinePhase(obs()), 'Running');
  });

  it('is Pending while a restore waits for its backup, Provisioning while it copies', () => {
    const waiting = {
      ...bound('data'),
      restore: { kind: 'waiting', reason: 'BackupNotFound', message: 'm' } as const,
    };
    assert.equal(podMachinePhase(obs({ volumes: [waiting] })), 'Pending');
    const copying = { ...bound('data'), restore: { kind: 'restoring', message: 'm' } as const };
    assert.equal(podMachinePhase(obs({ volumes: [copying], pod: noPod })), 'Provisioning');
  });

  it('is Stopping, then Stopped, after a stop request, whatever else it sees', () => {
    const failed = { ...runningPod, phase: 'Failed', failure: 'OOMKilled' };
    assert.equal(podMachinePhase(obs({ stopRequested: true, pod: failed })), 'Stopping');
    assert.equal(podMachinePhase(obs({ stopRequested: true, stopped: true, pod: noPod })), 'Stopped');
  });
});

describe('terminal and transient failures', () => {
  const terminal: { what: string; o: PodMachineObservations; reason: string; message: RegExp }[] = [
    {
      what: 'a failed pod',
      o: obs({ pod: { ...runningPod, phase: 'Failed', ready: false, failure: 'Evicted; low on memory' } }),
      reason: 'PodFailed',
      message: /pod web has failed: Evicted; low on memory; delete the pod to start a new one/,
    },
    {
      what: 'a pod that exited',
      o: obs({ pod: { ...runningPod, phase: 'Succeeded', ready: false, failure: 'exit code 0' } }),
      reason: 'PodFailed',
      message: /pod web has exited/,
    },
    {
      what: 'a failed restore',
      o: obs({
        volumes: [
          { ...bound('data'), restore: { kind: 'failed', reason: 'RestoreFailed', message: 'Job x failed' } },
        ],
        pod: noPod,
      }),
      reason: 'RestoreFailed',
      message: /Job x failed/,
    },
    {
      what: 'a foreign claim of a claim name',
      o: obs({ volumes: [{ ...bound('data'), conflict: 'claim web-data is not ours' }], pod: noPod }),
      reason: 'ClaimConflict',
      message: /claim web-data is not ours/,
    },
    {
      what: 'a foreign pod of the pod name',
      o: obs({ pod: { ...noPod, conflict: 'pod web is not ours' } }),
      reason: 'PodConflict',
      message: /pod web is not ours/,
    },
  ];
  for (const t of terminal) {
    it(`${t.what}: Failed, with failureReason and failureMessage`, () => {
      const status = computeStatus(undefined, t.o, NOW);
      assert.equal(status.phase, 'Failed');
      assert.equal(status.ready, false);
      assert.equal(status.failureReason, t.reason);
      assert.match(status.failureMessage ?? '', t.message);
      assert.equal(ready(t.o)?.reason, t.reason);
      const view = readInfrastructure({ status });
      assert.ok(!isViolation(view));
      assert.deepEqual(view.failure, { reason: status.failureReason, message: status.failureMessage });
    });
  }

  it('a terminal failure is cleared once its cause is gone', () => {
    const failed = computeStatus(undefined, terminal[0]!.o, NOW);
    const recovered = computeStatus(failed, obs(), NOW);
    assert.equal(recovered.failureReason, undefined);
    assert.equal(recovered.failureMessage, undefined);
    assert.equal(recovered.phase, 'Running');
  });

  it('a refused pod is transient: PodRefused, no failureReason, not Failed', () => {
    const refused = obs({ pod: { ...noPod, refused: 'pods "web" is forbidden: violates PodSecurity' } });
    const status = computeStatus(undefined, refused, NOW);
    assert.equal(status.failureReason, undefined);
    assert.notEqual(status.phase, 'Failed');
    assert.equal(ready(refused)?.reason, 'PodRefused');
    assert.match(ready(refused)?.message ?? '', /refused pod web: .*PodSecurity; retrying with backoff/);
  });

  it('a refused claim is transient: ClaimRefused in both conditions, Pending, no failureReason', () => {
    const refused = obs({
      volumes: [
        { name: 'data', claimName: 'web-data', refused: 'exceeded quota', restore: { kind: 'none' } },
      ],
      pod: noPod,
    });
    const status = computeStatus(undefined, refused, NOW);
    assert.equal(status.phase, 'Pending');
    assert.equal(status.failureReason, undefined);
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.reason]),
      [
        ['VolumesReady', 'ClaimRefused'],
        ['Ready', 'ClaimRefused'],
      ],
    );
  });

  it('a stop request supersedes a failure: none is reported while stopping', () => {
    const status = computeStatus(undefined, { ...terminal[0]!.o, stopRequested: true }, NOW);
    assert.equal(status.failureReason, undefined);
    assert.equal(status.phase, 'Stopping');
  });
});

describe('volumesVerdict', () => {
  it('names the claims still waiting to bind', () => {
    assert.deepEqual(volumesVerdict([bound('data'), { ...bound('logs'), claimPhase: undefined }]), {
      status: 'False',
      reason: 'ClaimsPending',
      message: 'waiting for claims to bind: web-logs (not created)',
    });
  });

  it('is True when every claim is bound and restored', () => {
    assert.deepEqual(volumesVerdict([bound('data')]), {
      status: 'True',
      reason: 'ClaimsBound',
      message: 'all 1 claims are bound',
    });
  });
});

describe('computeStatus: the contract fields', () => {
  it('running: ready, Ready with observedGeneration, providerID, addresses, volumes, not stopped', () => {
    const status = computeStatus(undefined, obs(), NOW);
    assert.deepEqual(status, {
      phase: 'Running',
      ready: true,
      providerID: 'pod://ns/web',
      addresses: [{ type: 'InternalIP', address: '10.0.0.7' }],
      volumes: [
        { name: 'data', claimName: 'web-data', phase: 'Bound' },
        { name: 'logs', claimName: 'web-logs', phase: 'Bound' },
      ],
      stopped: false,
      observedGeneration: 1,
      conditions: [
        {
          type: 'VolumesReady',
          status: 'True',
          reason: 'ClaimsBound',
          message: 'all 2 claims are bound',
          observedGeneration: 1,
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
        {
          type: 'Ready',
          status: 'True',
          reason: 'PodReady',
          message: 'pod web is running and ready',
          observedGeneration: 1,
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    });
    const view = readInfrastructure({ metadata: { generation: 1 }, status });
    assert.ok(!isViolation(view));
    assert.equal(view.ready, true);
    assert.equal(view.providerID, 'pod://ns/web');
    assert.deepEqual(view.addresses, status.addresses);
    assert.deepEqual(view.volumes, status.volumes);
  });

  it('carries copyAs for the contract when the pod has one, and leaves it out when it runs as root', () => {
    const copyAs = { runAsUser: 999, runAsGroup: 999, fsGroup: 999 };
    const status = computeStatus(undefined, obs({ copyAs }), NOW);
    assert.deepEqual(status.copyAs, copyAs);
    const view = readInfrastructure({ metadata: { generation: 1 }, status });
    assert.ok(!isViolation(view));
    assert.deepEqual(view.copyAs, copyAs);
    assert.equal('copyAs' in computeStatus(status, obs(), NOW), false);
  });

  it('no providerID before the pod exists; kept, with no addresses, once it is gone', () => {
    const before = computeStatus(undefined, obs({ pod: noPod }), NOW);
    assert.equal(before.providerID, undefined);
    assert.deepEqual(before.addresses, []);
    const running = computeStatus(before, obs(), NOW);
    const stopped = computeStatus(running, obs({ stopRequested: true, stopped: true, pod: noPod }), NOW);
    assert.equal(stopped.providerID, 'pod://ns/web');
    assert.deepEqual(stopped.addresses, []);
  });

  it('stopped only after a stop request, once nothing runs; Ready=False Stopping then Stopped', () => {
    const stopping = obs({ stopRequested: true });
    assert.equal(computeStatus(undefined, stopping, NOW).stopped, false);
    assert.equal(ready(stopping)?.reason, 'Stopping');
    const stopped = obs({ stopRequested: true, stopped: true, pod: noPod });
    const status = computeStatus(undefined, stopped, NOW);
    assert.equal(status.stopped, true);
    assert.equal(status.phase, 'Stopped');
    assert.equal(status.ready, false);
    assert.equal(ready(stopped)?.reason, 'Stopped');
    assert.equal(
      computeStatus(undefined, obs({ stopped: true }), NOW).stopped,
      false,
      'never without a request',
    );
  });

  it('moves lastTransitionTime only when a condition changes', () => {
    const first = computeStatus(undefined, obs(), NOW);
    const later = new Date('2026-01-01T01:00:00Z');
    assert.deepEqual(computeStatus(first, obs(), later).conditions, first.conditions);
    const changed = computeStatus(first, obs({ pod: { ...runningPod, ready: false } }), later);
    assert.equal(
      changed.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime,
      '2026-01-01T01:00:00Z',
    );
  });
});

describe('kstatus Stalled', () => {
  const stalled = (o: PodMachineObservations, current?: Parameters<typeof computeStatus>[0]) =>
    computeStatus(current, o, NOW).conditions?.find((c) => c.type === 'Stalled');

  it('mirrors failureReason and failureMessage for a terminal failure', () => {
    const o = obs({ pod: { ...runningPod, phase: 'Failed', ready: false, failure: 'Evicted' } });
    const status = computeStatus(undefined, o, NOW);
    assert.deepEqual(stalled(o), {
      type: 'Stalled',
      status: 'True',
      reason: status.failureReason,
      message: status.failureMessage,
      observedGeneration: 1,
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
  });

  it('is absent for transient states and a stop request, and dropped once the failure is gone', () => {
    assert.equal(stalled(obs()), undefined);
    assert.equal(stalled(obs({ pod: noPod })), undefined);
    assert.equal(stalled(obs({ pod: { ...noPod, refused: 'exceeded quota' } })), undefined);
    const failedPod = { ...runningPod, phase: 'Failed', ready: false };
    assert.equal(stalled(obs({ stopRequested: true, pod: failedPod })), undefined);
    const failed = computeStatus(undefined, obs({ pod: failedPod }), NOW);
    assert.equal(stalled(obs(), failed), undefined);
  });
});
