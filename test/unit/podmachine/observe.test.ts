import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { desiredPod } from '../../../src/controllers/podmachine/logic/children.ts';
import { describeProbe, observePod } from '../../../src/controllers/podmachine/logic/observe.ts';
import { podMachine } from './fixtures.ts';

const NOT_READY = {
  type: 'Ready',
  status: 'False',
  reason: 'ContainersNotReady',
  message: 'containers with unready status: [machine]',
};

function running(pm: ReturnType<typeof podMachine>, container: Partial<V1ContainerStatus>): V1Pod {
  return {
    ...desiredPod(pm),
    status: {
      phase: 'Running',
      conditions: [NOT_READY],
      containerStatuses: [
        { name: 'machine', image: 'app:1', imageID: '', restartCount: 0, ready: false, ...container },
      ],
    },
  };
}

describe('observePod: why a running pod is not Ready', () => {
  it('names the startup probe the container has not passed', () => {
    const pm = podMachine({ startupProbe: { httpGet: { port: 8080, path: '/started' } } });
    const obs = observePod(pm, running(pm, { started: false, state: { running: {} } }));
    assert.equal(obs.ready, false);
    assert.equal(
      obs.unready,
      'container machine has not passed its startupProbe (httpGet http port 8080/started) yet',
    );
  });

  it("without a probe to name, quotes the kubelet's Ready condition", () => {
    const pm = podMachine();
    assert.equal(
      observePod(pm, running(pm, { started: true, state: { running: {} } })).unready,
      'ContainersNotReady: containers with unready status: [machine]',
    );
  });

  it('says nothing of unreadiness for a ready pod, or one not running yet', () => {
    const pm = podMachine();
    const ready = running(pm, { ready: true });
    ready.status!.conditions = [{ type: 'Ready', status: 'True' }];
    assert.equal(observePod(pm, ready).unready, undefined);
    const pending = running(pm, {});
    pending.status!.phase = 'Pending';
    assert.equal(observePod(pm, pending).unready, undefined);
  });
});

describe('observePod: why a Pending pod does not run', () => {
  const pending = (pm: ReturnType<typeof podMachine>, container: Partial<V1ContainerStatus>): V1Pod => {
    const pod = running(pm, container);
    pod.status!.phase = 'Pending';
    return pod;
  };

  it('names the container waiting on a missing Secret or an image', () => {
    const pm = podMachine();
    const noSecret = pending(pm, {
      state: { waiting: { reason: 'CreateContainerConfigError', message: 'secret "db" not found' } },
    });
    assert.equal(
      observePod(pm, noSecret).pending,
      'container machine is waiting: CreateContainerConfigError (secret "db" not found)',
    );
  });

  it("else the scheduler's reason; nothing while the container is only being created", () => {
    const pm = podMachine();
    const unscheduled = pending(pm, {});
    unscheduled.status!.containerStatuses = [];
    unscheduled.status!.conditions = [
      { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available' },
    ];
    assert.equal(observePod(pm, unscheduled).pending, 'not scheduled: 0/3 nodes are available');
    const creating = pending(pm, { state: { waiting: { reason: 'ContainerCreating' } } });
    assert.equal(observePod(pm, creating).pending, undefined);
  });
});

describe('describeProbe', () => {
  it('names each handler', () => {
    assert.equal(
      describeProbe('livenessProbe', { tcpSocket: { port: 'pg' } }),
      'livenessProbe (tcpSocket port pg)',
    );
    assert.equal(
      describeProbe('readinessProbe', { grpc: { port: 9090, service: 'health' } }),
      'readinessProbe (grpc port 9090 service health)',
    );
    assert.equal(
      describeProbe('readinessProbe', { httpGet: { port: 443, scheme: 'HTTPS' } }),
      'readinessProbe (httpGet https port 443/)',
    );
  });
});
