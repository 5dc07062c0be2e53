// Recorded situations: what the API server held in each case the why-walk must explain.
import type { Unstructured } from '../../../src/runtime/client/object.ts';
import { cond, obj, RecordedSource } from './recorded.ts';

const REVISION = 'apps.basicoperator.dev/revision';

function readyPod(name: string, owner: Unstructured): Unstructured {
  return obj('Pod', name, { owner, status: { phase: 'Running', conditions: [cond('Ready', 'True', '')] } });
}

/** A pod whose container `machine` started and is not ready (its readiness probe has not passed). */
function startedNotReady(name: string, owner: Unstructured): Unstructured {
  return obj('Pod', name, {
    owner,
    status: {
      phase: 'Running',
      conditions: [
        cond('PodScheduled', 'True', ''),
        cond('Ready', 'False', 'ContainersNotReady', 'containers with unready status: [machine]'),
      ],
      containerStatuses: [
        { name: 'machine', ready: false, started: true, restartCount: 0, state: { running: {} } },
      ],
    },
  });
}

/** A rollout to revision 2 held by a pod that runs and never becomes Ready (its readiness probe fails). */
export function neverReadyRollout({ probeEvent = true } = {}) {
  const bd = obj('BasicDeployment', 'web', {
    spec: { replicas: 2 },
    status: {
      readyReplicas: 2,
      conditions: [
        cond('Ready', 'False', 'RolloutInProgress', 'waiting for 1 of 2 updated pods to be available'),
        cond('Progressing', 'True', 'ReplicaSetUpdated'),
      ],
    },
  });
  const old = obj('BasicReplicaSet', 'web-old', {
    owner: bd,
    annotations: { [REVISION]: '1' },
    spec: { replicas: 1 },
    status: { readyReplicas: 1, conditions: [cond('Ready', 'True', 'PodsReady')] },
  });
  const current = obj('BasicReplicaSet', 'web-new', {
    owner: bd,
    annotations: { [REVISION]: '2' },
    spec: { replicas: 2 },
    status: { readyReplicas: 1, conditions: [cond('Ready', 'False', 'PodsNotReady', '1 of 2 pods ready')] },
  });
  const stuck = obj('Pod', 'web-new-b', {
    owner: current,
    status: {
      phase: 'Running',
      conditions: [
        cond('PodScheduled', 'True', ''),
        cond('Ready', 'False', 'ContainersNotReady', 'containers with unready status: [app]'),
      ],
      containerStatuses: [{ name: 'app', ready: false, restartCount: 0, state: { running: {} } }],
    },
  });
  const source = new RecordedSource()
    .add('BasicDeployment', bd)
    .add('BasicReplicaSet', old)
    .add('BasicReplicaSet', current)
    .add('Pod', readyPod('web-old-a', old))
    .add('Pod', readyPod('web-new-a', current))
    .add('Pod', stuck);
  if (probeEvent) {
    source.event(stuck.metadata?.uid ?? '', {
      type: 'Warning',
      reason: 'Unhealthy',
      message: 'Readiness probe failed: connection refused',
      time: '2026-11-24T09:59:30Z',
      count: 12,
    });
  }
  return { source, bd, stuck };
}

export function crashLooping() {
  const brs = obj('BasicReplicaSet', 'api', {
    spec: { replicas: 1 },
    status: { conditions: [cond('Ready', 'False', 'PodsNotReady')] },
  });
  const pod = obj('Pod', 'api-x', {
    owner: brs,
    status: {
      phase: 'Running',
      conditions: [cond('Ready', 'False', 'ContainersNotReady')],
      containerStatuses: [
        {
          name: 'api',
          restartCount: 5,
          state: {
            waiting: { reason: 'CrashLoopBackOff', message: 'back-off 2m40s restarting failed container' },
          },
        },
      ],
    },
  });
  return { source: new RecordedSource().add('BasicReplicaSet', brs).add('Pod', pod), brs };
}

export function quotaRefused() {
  const message =
    'pods "q-abc" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1';
  const bd = obj('BasicDeployment', 'q', {
    spec: { replicas: 3 },
    status: {
      conditions: [
        cond('Ready', 'False', 'MinimumReplicasUnavailable'),
        cond('ReplicaFailure', 'True', 'FailedCreate', message),
      ],
    },
  });
  const brs = obj('BasicReplicaSet', 'q-abc', {
    owner: bd,
    annotations: { [REVISION]: '1' },
    spec: { replicas: 3 },
    status: {
      readyReplicas: 1,
      conditions: [
        cond('Ready', 'False', 'PodsNotReady'),
        cond('ReplicaFailure', 'True', 'FailedCreate', message),
      ],
    },
  });
  const source = new RecordedSource()
    .add('BasicDeployment', bd)
    .add('BasicReplicaSet', brs)
    .add('Pod', readyPod('q-abc-1', brs))
    .event(brs.metadata?.uid ?? '', {
      type: 'Warning',
      reason: 'FailedCreate',
      message: `Error creating: ${message}`,
      time: '2026-11-24T09:59:50Z',
      count: 4,
    });
  return { source, bd };
}

const PODMACHINE_API = 'infra.basicoperator.dev/v1alpha1';

/** A deleted Machine whose backup copy failed every attempt. */
export function failingBackup() {
  const machine = obj('Machine', 'doomed', {
    deleting: true,
    finalizers: ['infra.basicoperator.dev/volume-backup'],
    spec: { image: 'pause' },
    status: {
      phase: 'Stopped',
      infrastructureRef: { apiVersion: PODMACHINE_API, kind: 'PodMachine', name: 'doomed' },
      conditions: [
        cond('Ready', 'False', 'Stopped'),
        cond(
          'VolumeBackup',
          'False',
          'BackupFailed',
          'VolumeBackup doomed-1a2b3c4d failed: 2 of 2 copy attempts failed',
        ),
      ],
    },
  });
  const pm = obj('PodMachine', 'doomed', {
    owner: machine,
    status: { ready: false, conditions: [cond('Ready', 'False', 'Stopped')] },
  });
  const vb = obj('VolumeBackup', 'doomed-1a2b3c4d', {
    spec: {
      machineName: 'doomed',
      machineUID: machine.metadata?.uid,
      volumes: [{ name: 'data', claimName: 'doomed-data' }],
    },
    status: {
      phase: 'Failed',
      attempts: 2,
      conditions: [
        cond(
          'Ready',
          'False',
          'BackupFailed',
          'volume data: 2 of 2 copy attempts failed, the last: BackoffLimitExceeded',
        ),
      ],
    },
  });
  const job1 = obj('Job', 'doomed-1a2b3c4d-data-1', {
    owner: vb,
    status: {
      failed: 1,
      conditions: [
        cond('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'),
      ],
    },
  });
  const job2 = obj('Job', 'doomed-1a2b3c4d-data-2', {
    owner: vb,
    status: {
      failed: 1,
      conditions: [
        cond('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'),
      ],
    },
  });
  const claim = obj('PersistentVolumeClaim', 'doomed-1a2b3c4d-data', {
    owner: vb,
    status: { phase: 'Pending' },
  });
  const source = new RecordedSource()
    .add('Machine', machine)
    .add('PodMachine', pm)
    .add('VolumeBackup', vb)
    .add('Job', job1)
    .add('Job', job2)
    .add('PersistentVolumeClaim', claim)
    .add(
      'PersistentVolumeClaim',
      obj('PersistentVolumeClaim', 'doomed-data', { owner: pm, status: { phase: 'Bound' } }),
    );
  return { source, machine };
}

export function waitingForFinalizer() {
  const machine = obj('Machine', 'early', {
    spec: { image: 'pause' },
    status: {
      phase: 'Pending',
      conditions: [
        cond(
          'InfrastructureReady',
          'False',
          'WaitingForBackupFinalizer',
          'backup policy is OnDelete: waiting for the VolumeBackup controller to add the finalizer infra.basicoperator.dev/volume-backup',
        ),
        cond('Ready', 'False', 'WaitingForBackupFinalizer'),
      ],
    },
  });
  return { source: new RecordedSource().add('Machine', machine), machine };
}

export function missingProvider() {
  const machine = obj('Machine', 'db', {
    spec: {
      infrastructureRef: {
        apiVersion: 'examples.basicoperator.dev/v1alpha1',
        kind: 'StatefulSetMachine',
        name: 'db',
      },
    },
    status: {
      phase: 'Pending',
      conditions: [
        cond(
          'InfrastructureReady',
          'False',
          'InfrastructureNotFound',
          'StatefulSetMachine db does not exist in namespace shop',
        ),
        cond('Ready', 'False', 'InfrastructureNotFound'),
      ],
    },
  });
  const source = new RecordedSource().add('Machine', machine).serve('examples.basicoperator.dev/v1alpha1', {
    group: 'examples.basicoperator.dev',
    version: 'v1alpha1',
    kind: 'StatefulSetMachine',
    plural: 'statefulsetmachines',
    namespaced: true,
  });
  return { source, machine };
}

export function readyMachine() {
  const machine = obj('Machine', 'web', {
    spec: { image: 'pause' },
    status: {
      phase: 'Running',
      ready: true,
      infrastructureRef: { apiVersion: PODMACHINE_API, kind: 'PodMachine', name: 'web' },
      conditions: [cond('InfrastructureReady', 'True', 'PodReady'), cond('Ready', 'True', 'PodReady')],
    },
  });
  const pm = obj('PodMachine', 'web', {
    owner: machine,
    status: { ready: true, phase: 'Running', conditions: [cond('Ready', 'True', 'PodReady')] },
  });
  const source = new RecordedSource()
    .add('Machine', machine)
    .add('PodMachine', pm)
    .add('Pod', readyPod('web', pm))
    .add(
      'PersistentVolumeClaim',
      obj('PersistentVolumeClaim', 'web-data', { owner: pm, status: { phase: 'Bound' } }),
    );
  return { source, machine };
}

/** An inline Machine, its PodMachine in the `reason` it reports, and the pod (if any) under it. */
function machineWithPodMachine(name: string, reason: string, message: string) {
  const machine = obj('Machine', name, {
    spec: { image: 'postgres:17' },
    status: {
      phase: 'Provisioning',
      infrastructureRef: { apiVersion: PODMACHINE_API, kind: 'PodMachine', name },
      conditions: [
        cond('InfrastructureReady', 'False', reason, `PodMachine ${name}: ${message}`),
        cond('Ready', 'False', reason, `PodMachine ${name}: ${message}`),
      ],
    },
  });
  const pm = obj('PodMachine', name, {
    owner: machine,
    status: { ready: false, phase: 'Provisioning', conditions: [cond('Ready', 'False', reason, message)] },
  });
  const source = new RecordedSource()
    .add('Machine', machine)
    .add('PodMachine', pm)
    .add(
      'PersistentVolumeClaim',
      obj('PersistentVolumeClaim', `${name}-data`, { owner: pm, status: { phase: 'Bound' } }),
    );
  return { source, machine, pm };
}

/**
 * A database Machine whose pod runs and whose readiness probe keeps failing: the kubelet's Unhealthy
 * Events (the latest of each probe counts; an older message of the same probe is not repeated).
 */
export function failingReadinessProbe() {
  const { source, machine, pm } = machineWithPodMachine(
    'db',
    'PodNotReady',
    'pod db is running but not ready',
  );
  const pod = startedNotReady('db', pm);
  const uid = pod.metadata?.uid ?? '';
  const probe = { type: 'Warning', reason: 'Unhealthy', fieldPath: 'spec.containers{machine}' };
  source
    .add('Pod', pod)
    .event(uid, {
      ...probe,
      message: 'Readiness probe failed: /var/run/postgresql:5432 - no response',
      time: '2026-11-24T09:58:00Z',
      count: 3,
    })
    .event(uid, {
      type: 'Normal',
      reason: 'Started',
      message: 'Started container machine',
      time: '2026-11-24T09:58:30Z',
      count: 1,
    })
    .event(uid, {
      ...probe,
      message: 'Readiness probe failed: /var/run/postgresql:5432 - rejecting connections',
      time: '2026-11-24T09:59:50Z',
      count: 14,
    });
  return { source, machine };
}

/** A pod whose startup probe has not passed yet: started=false, "Startup probe failed". */
export function failingStartupProbe() {
  const { source, machine, pm } = machineWithPodMachine(
    'slow',
    'PodNotReady',
    'pod slow is running but not ready',
  );
  const pod = obj('Pod', 'slow', {
    owner: pm,
    status: {
      phase: 'Running',
      conditions: [cond('Ready', 'False', 'ContainersNotReady')],
      containerStatuses: [
        {
          name: 'machine',
          ready: false,
          started: false,
          restartCount: 1,
          state: { running: {} },
          lastState: { terminated: { reason: 'Error', exitCode: 137 } },
        },
      ],
    },
  });
  source.add('Pod', pod).event(pod.metadata?.uid ?? '', {
    type: 'Warning',
    reason: 'Unhealthy',
    fieldPath: 'spec.containers{machine}',
    message:
      'Startup probe failed: Get "http://10.0.0.7:8080/healthz": dial tcp 10.0.0.7:8080: connect: connection refused',
    time: '2026-11-24T09:59:40Z',
    count: 9,
  });
  return { source, machine };
}

/** A container the kubelet keeps killing because its liveness probe fails: a crash loop with the probe. */
export function failingLivenessProbe() {
  const { source, machine, pm } = machineWithPodMachine(
    'flaky',
    'PodNotReady',
    'pod flaky is running but not ready',
  );
  const pod = obj('Pod', 'flaky', {
    owner: pm,
    status: {
      phase: 'Running',
      conditions: [cond('Ready', 'False', 'ContainersNotReady')],
      containerStatuses: [
        {
          name: 'machine',
          ready: false,
          restartCount: 4,
          state: {
            waiting: { reason: 'CrashLoopBackOff', message: 'back-off 1m20s restarting failed container' },
          },
          lastState: { terminated: { reason: 'Error', exitCode: 137 } },
        },
      ],
    },
  });
  source
    .add('Pod', pod)
    .event(pod.metadata?.uid ?? '', {
      type: 'Warning',
      reason: 'Unhealthy',
      fieldPath: 'spec.containers{machine}',
      message: 'Liveness probe failed: command timed out',
      time: '2026-11-24T09:59:00Z',
      count: 12,
    })
    .event(pod.metadata?.uid ?? '', {
      type: 'Warning',
      reason: 'BackOff',
      message: 'Back-off restarting failed container machine in pod flaky_shop',
      time: '2026-11-24T09:59:30Z',
      count: 6,
    });
  return { source, machine };
}

/** A Machine asking for a privileged pod in a namespace enforcing Pod Security restricted. */
export function refusedPod() {
  const refusal =
    'pods "priv" is forbidden: violates PodSecurity "restricted:latest": privileged (container "machine" must not set securityContext.privileged=true)';
  const message = `the API server refused pod priv: ${refusal}; retrying with backoff`;
  const { source, machine, pm } = machineWithPodMachine('priv', 'PodRefused', message);
  source.event(pm.metadata?.uid ?? '', {
    type: 'Warning',
    reason: 'PodRefused',
    message,
    time: '2026-11-24T09:59:55Z',
    count: 5,
  });
  return { source, machine, refusal };
}

const STS_MACHINE_API = 'examples.basicoperator.dev/v1alpha1';

/**
 * A Machine on the example StatefulSetMachine provider: the provider owns a StatefulSet, the
 * StatefulSet owns the pod, and the pod's readiness probe fails. `refused`: the StatefulSet has no
 * pod, its create refused by Pod Security.
 */
export function statefulSetMachine({ refused = false } = {}) {
  const waiting = refused
    ? 'waiting for kube-controller-manager to create pod db-0 of StatefulSet db'
    : 'pod db-0 is Running: container machine is not ready (readiness probe)';
  const reason = refused ? 'WaitingForPod' : 'PodNotReady';
  const machine = obj('Machine', 'db', {
    spec: { infrastructureRef: { apiVersion: STS_MACHINE_API, kind: 'StatefulSetMachine', name: 'db' } },
    status: {
      phase: 'Provisioning',
      infrastructureRef: { apiVersion: STS_MACHINE_API, kind: 'StatefulSetMachine', name: 'db' },
      conditions: [
        cond('InfrastructureReady', 'False', reason, `StatefulSetMachine db: ${waiting}`),
        cond('Ready', 'False', reason),
      ],
    },
  });
  const provider = obj('StatefulSetMachine', 'db', {
    owner: machine,
    status: {
      ready: false,
      phase: 'Provisioning',
      volumes: [{ name: 'data', claimName: 'db-data', phase: 'Bound' }],
      conditions: [cond('Ready', 'False', reason, waiting)],
    },
  });
  const sts = obj('StatefulSet', 'db', {
    owner: provider,
    spec: { replicas: 1, selector: { matchLabels: { app: 'db' } } },
    status: { replicas: refused ? 0 : 1, readyReplicas: 0, observedGeneration: 1 },
  });
  const source = new RecordedSource()
    .add('Machine', machine)
    .add('StatefulSetMachine', provider)
    .add('PersistentVolumeClaim', obj('PersistentVolumeClaim', 'db-data', { status: { phase: 'Bound' } }))
    .add('StatefulSet', sts)
    .add('StatefulSet', obj('StatefulSet', 'someone-elses', { spec: { replicas: 1 } }))
    .add('Pod', obj('Pod', 'unrelated', { status: { phase: 'Pending' } }))
    .serve(STS_MACHINE_API, {
      group: 'examples.basicoperator.dev',
      version: 'v1alpha1',
      kind: 'StatefulSetMachine',
      plural: 'statefulsetmachines',
      namespaced: true,
    });
  if (refused) {
    source.event(sts.metadata?.uid ?? '', {
      type: 'Warning',
      reason: 'FailedCreate',
      message:
        'create Pod db-0 in StatefulSet db failed error: pods "db-0" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true',
      time: '2026-11-24T09:59:40Z',
      count: 9,
    });
    return { source, machine };
  }
  const pod = startedNotReady('db-0', sts);
  source.add('Pod', pod).event(pod.metadata?.uid ?? '', {
    type: 'Warning',
    reason: 'Unhealthy',
    fieldPath: 'spec.containers{machine}',
    message: 'Readiness probe failed: /var/run/postgresql:5432 - rejecting connections',
    time: '2026-11-24T09:59:50Z',
    count: 7,
  });
  return { source, machine };
}
