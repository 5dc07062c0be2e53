// Recorded situations: what the API server held in each case the why-walk must explain.
import type { Unstructured } from '../../../src/runtime/client/object.ts';
import { cond, obj, RecordedSource } from './recorded.ts';

const REVISION = 'apps.basicoperator.dev/revision';

function readyPod(name: string, owner: Unstructured): Unstructured {
  return obj('Pod', name, { owner, status: { phase: 'Running', conditions: [cond('Ready', 'True', '')] } });
}

/** A rollout to revision 2 held by a pod that runs and never becomes Ready. */
export function neverReadyRollout() {
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
    .add('Pod', stuck)
    .event(stuck.metadata?.uid ?? '', {
      type: 'Warning',
      reason: 'Unhealthy',
      message: 'Readiness probe failed: connection refused',
      time: '2026-11-24T09:59:30Z',
      count: 12,
    });
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
