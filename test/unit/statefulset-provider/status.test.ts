// The contract's fields from what the reconciler observed (pure): readiness, the Ready condition with
// observedGeneration, providerID, addresses, volumes, copyAs, stopped, and failures only when terminal.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PodStatus, V1StatefulSet } from '@kubernetes/client-node';
import {
  computeStatus,
  type Observations,
  observePod,
  readiness,
} from '../../../examples/statefulset-provider/src/status.ts';
import { stopVerdict } from '../../../examples/statefulset-provider/src/stop.ts';
import { isViolation, readInfrastructure } from '../../../src/apis/index.ts';
import { machine, NOW, RUNNING_AND_READY } from './fixtures.ts';

const m = { ...machine(), metadata: { ...machine().metadata, generation: 4 } };
const DATA_BOUND = { name: 'data', claimName: 'data-db-0', phase: 'Bound' };
const BOUND = [DATA_BOUND, { name: 'logs', claimName: 'logs-db-0', phase: 'Bound' }];
const pod = (status: V1PodStatus, deleting = false) =>
  observePod({ metadata: { name: 'db-0', ...(deleting ? { deletionTimestamp: NOW } : {}) }, status });
const running = (p = pod(RUNNING_AND_READY)) => ({ statefulSet: 'db', podName: 'db-0', pod: p });

describe('observePod', () => {
  it('is ready when Running with Ready True, and reports its IPs as InternalIP', () => {
    const view = pod({ ...RUNNING_AND_READY, podIPs: [{ ip: '10.0.0.7' }, { ip: 'fd00::7' }] });
    assert.equal(view.ready, true);
    assert.deepEqual(view.addresses, [
      { type: 'InternalIP', address: '10.0.0.7' },
      { type: 'InternalIP', address: 'fd00::7' },
    ]);
  });

  it('says why it is not ready, from the container', () => {
    const view = pod({
      phase: 'Pending',
      containerStatuses: [
        {
          name: 'machine',
          image: 'app:1',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { waiting: { reason: 'ImagePullBackOff', message: 'no such image' } },
        },
      ],
    });
    assert.equal(view.ready, false);
    assert.equal(view.waiting, 'pod db-0 is Pending: ImagePullBackOff: no such image');
    assert.equal(pod(RUNNING_AND_READY, true).ready, false);
  });
});

describe('observePod: a running pod that is not Ready', () => {
  const container = (started: boolean, restartCount: number) => ({
    name: 'machine',
    image: 'app:1',
    imageID: '',
    ready: false,
    started,
    restartCount,
    state: { running: {} },
  });
  const notReady = [{ type: 'Ready', status: 'False' }];

  it('names the probe that holds it: readiness once started, startup before', () => {
    const readinessProbe = pod({
      phase: 'Running',
      conditions: notReady,
      containerStatuses: [container(true, 0)],
    });
    assert.equal(readinessProbe.ready, false);
    assert.equal(
      readinessProbe.waiting,
      'pod db-0 is Running: container machine is not ready (readiness probe)',
    );
    const startup = pod({ phase: 'Running', conditions: notReady, containerStatuses: [container(false, 2)] });
    assert.equal(
      startup.waiting,
      'pod db-0 is Running: container machine has not started (startup probe), restarted 2 times',
    );
  });
});

describe('readiness', () => {
  it('needs the pod, every claim Bound, and the pod Ready, and says which is missing', () => {
    assert.equal(readiness({ ...running(), pod: undefined }, BOUND).reason, 'WaitingForPod');
    const unbound = readiness(running(), [DATA_BOUND, { name: 'logs', claimName: 'logs-db-0' }]);
    assert.equal(unbound.reason, 'ClaimsNotBound');
    assert.match(unbound.message, /logs-db-0 \(not created yet\)/);
    assert.equal(readiness(running(pod({ phase: 'Running' })), BOUND).reason, 'PodNotReady');
    const ready = readiness(running(), BOUND);
    assert.equal(ready.ready, true);
    assert.equal(ready.message, 'pod db-0 is Running and Ready; claims data-db-0, logs-db-0 Bound');
  });
});

describe('computeStatus', () => {
  it('a running machine: ready, Ready True for this generation, providerID, addresses, volumes', () => {
    const status = computeStatus(
      m,
      undefined,
      { observation: { kind: 'running', running: running() }, volumes: BOUND },
      NOW,
    );
    assert.equal(status.phase, 'Running');
    assert.equal(status.ready, true);
    assert.equal(status.providerID, 'statefulset://ns/db');
    assert.deepEqual(status.addresses, [{ type: 'InternalIP', address: '10.0.0.7' }]);
    assert.deepEqual(status.volumes, BOUND);
    assert.equal(status.failureReason, undefined);
    assert.equal(status.stopped, undefined);
    const ready = status.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'True');
    assert.equal(ready?.observedGeneration, 4);
    // What the Machine controller reads of it, through the contract.
    const view = readInfrastructure({ ...m, status });
    assert.ok(!isViolation(view));
    assert.equal(view.ready, true);
    assert.equal(view.providerID, 'statefulset://ns/db');
    assert.deepEqual(view.volumes, BOUND);
  });

  it('waiting (for a backup) is not a failure: Pending, Ready False with the reason', () => {
    const status = computeStatus(
      m,
      undefined,
      {
        observation: {
          kind: 'waiting',
          phase: 'Pending',
          verdict: { reason: 'BackupNotFound', message: 'no backup' },
        },
        volumes: [],
      },
      NOW,
    );
    assert.equal(status.phase, 'Pending');
    assert.equal(status.ready, false);
    assert.equal(status.failureReason, undefined);
    assert.equal(status.conditions?.[0]?.reason, 'BackupNotFound');
  });

  it('a terminal failure sets failureReason and failureMessage', () => {
    const failure = { reason: 'RestoreFailed', message: 'Job failed' };
    const status = computeStatus(
      m,
      undefined,
      { observation: { kind: 'failed', failure }, volumes: [] },
      NOW,
    );
    assert.equal(status.phase, 'Failed');
    assert.equal(status.failureReason, 'RestoreFailed');
    assert.equal(status.failureMessage, 'Job failed');
    const view = readInfrastructure({ ...m, status });
    assert.ok(!isViolation(view));
    assert.deepEqual(view.failure, failure);
  });

  it('reports stopped only when told, and never ready while stopping', () => {
    const stopping = computeStatus(
      m,
      undefined,
      {
        observation: { kind: 'stopping', stopped: false, message: 'pod db-0 is terminating' },
        volumes: BOUND,
      },
      NOW,
    );
    assert.equal(stopping.phase, 'Stopping');
    assert.equal(stopping.stopped, false);
    assert.equal(stopping.ready, false);
    const stopped = computeStatus(
      m,
      stopping,
      { observation: { kind: 'stopping', stopped: true, message: 'gone' }, volumes: BOUND },
      NOW,
    );
    assert.equal(stopped.phase, 'Stopped');
    assert.equal(stopped.stopped, true);
    assert.deepEqual(stopped.volumes, BOUND);
  });

  it('reports whom its pod runs as (copyAs) in every phase: the podSecurityContext over the defaults, none as root', () => {
    const observations: Observations[] = [
      { observation: { kind: 'running', running: running() }, volumes: BOUND },
      { observation: { kind: 'stopping', stopped: true, message: 'gone' }, volumes: BOUND },
      { observation: { kind: 'failed', failure: { reason: 'RestoreFailed', message: 'm' } }, volumes: [] },
    ];
    const postgres = machine({ podSecurityContext: { runAsUser: 999, runAsGroup: 999, fsGroup: 999 } });
    for (const o of observations) {
      const status = computeStatus(postgres, undefined, o, NOW);
      assert.deepEqual(status.copyAs, { runAsUser: 999, runAsGroup: 999, fsGroup: 999 }, o.observation.kind);
      const view = readInfrastructure({ ...postgres, status });
      assert.ok(!isViolation(view));
      assert.deepEqual(view.copyAs, status.copyAs, 'the Machine controller reads it through the contract');
    }
    const defaults = computeStatus(m, undefined, observations[0]!, NOW);
    assert.deepEqual(defaults.copyAs, { runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532 });
    const root = machine({ podSecurityContext: { runAsUser: 0 } });
    assert.equal('copyAs' in computeStatus(root, undefined, observations[0]!, NOW), false);
    const beyond = machine({ podSecurityContext: { runAsUser: 3000000000 } });
    assert.equal('copyAs' in computeStatus(beyond, undefined, observations[0]!, NOW), false);
  });

  it('keeps the condition transition time while its status stays', () => {
    const first = computeStatus(
      m,
      undefined,
      { observation: { kind: 'running', running: running() }, volumes: BOUND },
      new Date('2026-01-01T00:00:00Z'),
    );
    const again = computeStatus(
      m,
      first,
      { observation: { kind: 'running', running: running() }, volumes: BOUND },
      NOW,
    );
    assert.equal(again.conditions?.[0]?.lastTransitionTime, '2026-01-01T00:00:00Z');
  });
});

describe('stopVerdict', () => {
  const set = (replicas: number, generation: number, observed: number, current: number): V1StatefulSet => ({
    metadata: { name: 'db', generation },
    spec: { replicas, selector: {}, template: {} },
    status: { observedGeneration: observed, replicas: current },
  });

  it('is not stopped while the pod exists, terminating or not', () => {
    const verdict = stopVerdict(m, {
      statefulSet: set(0, 2, 2, 0),
      pod: { metadata: { name: 'db-0', deletionTimestamp: NOW } },
      copying: [],
    });
    assert.deepEqual(verdict, { stopped: false, message: 'stop requested: pod db-0 is terminating' });
  });

  it('is not stopped until kube-controller-manager has observed the scale-down', () => {
    assert.equal(
      stopVerdict(m, { statefulSet: set(0, 2, 1, 1), pod: undefined, copying: [] }).stopped,
      false,
    );
    assert.equal(
      stopVerdict(m, { statefulSet: set(0, 2, 2, 1), pod: undefined, copying: [] }).stopped,
      false,
    );
    assert.equal(stopVerdict(m, { statefulSet: set(0, 2, 2, 0), pod: undefined, copying: [] }).stopped, true);
  });

  it('is not stopped while a restore Job still copies', () => {
    const verdict = stopVerdict(m, {
      statefulSet: undefined,
      pod: undefined,
      copying: [{ metadata: { name: 'db-data-restore' } }],
    });
    assert.equal(verdict.stopped, false);
    assert.match(verdict.message, /db-data-restore/);
  });

  it('is stopped at once when nothing was ever started', () => {
    assert.equal(stopVerdict(m, { statefulSet: undefined, pod: undefined, copying: [] }).stopped, true);
  });
});
