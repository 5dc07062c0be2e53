// Valid objects of each kind. Each call returns a fresh copy, so tests may mutate it.
import type { BasicDeployment, BasicReplicaSet, Machine, VolumeBackup } from '../../../src/apis/index.ts';

const podTemplate = (app: string): BasicDeployment['spec']['template'] => ({
  metadata: { labels: { app, tier: 'web' }, annotations: { 'example.com/note': 'free text' } },
  spec: {
    containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10', ports: [{ containerPort: 8080 }] }],
    terminationGracePeriodSeconds: 5,
  },
});

export function basicDeployment(): BasicDeployment {
  return {
    apiVersion: 'apps.basicoperator.dev/v1alpha1',
    kind: 'BasicDeployment',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: 3,
      selector: {
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: 'tier', operator: 'In', values: ['web', 'api'] }],
      },
      template: podTemplate('web'),
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: '25%' } },
      minReadySeconds: 5,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      paused: false,
    },
    status: {
      ready: true,
      observedGeneration: 1,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      selector: 'app=web,tier in (api,web)',
      conditions: [
        {
          type: 'Available',
          status: 'True',
          observedGeneration: 1,
          lastTransitionTime: '2025-01-02T03:04:05Z',
          reason: 'MinimumReplicasAvailable',
          message: 'Deployment has minimum availability.',
        },
      ],
    },
  };
}

export function basicReplicaSet(): BasicReplicaSet {
  return {
    apiVersion: 'apps.basicoperator.dev/v1alpha1',
    kind: 'BasicReplicaSet',
    metadata: { name: 'web-5d8f7c', namespace: 'default' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web', 'apps.basicoperator.dev/pod-template-hash': '5d8f7c' } },
      template: {
        metadata: { labels: { app: 'web', 'apps.basicoperator.dev/pod-template-hash': '5d8f7c' } },
        spec: { containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10' }] },
      },
      minReadySeconds: 0,
    },
    status: {
      activeReplicas: 2,
      replicas: 2,
      readyReplicas: 1,
      availableReplicas: 1,
      observedGeneration: 4,
      selector: 'app=web,apps.basicoperator.dev/pod-template-hash=5d8f7c',
    },
  };
}

export function machine(): Machine {
  return {
    apiVersion: 'infra.basicoperator.dev/v1alpha1',
    kind: 'Machine',
    metadata: { name: 'db', namespace: 'default' },
    spec: {
      image: 'registry.k8s.io/pause:3.10',
      command: ['/pause'],
      args: [],
      volumes: [
        { name: 'data', size: '1Gi', mountPath: '/data', storageClassName: 'standard' },
        {
          name: 'logs',
          size: 1048576,
          mountPath: '/var/log/db',
          restoreFrom: { volumeBackup: 'db-backup-1', volume: 'logs' },
        },
      ],
      backup: { policy: 'OnDelete' },
    },
    status: {
      phase: 'Running',
      ready: true,
      volumes: [
        { name: 'data', claimName: 'db-data', phase: 'Bound' },
        { name: 'logs', claimName: 'db-logs', phase: 'Bound' },
      ],
      observedGeneration: 1,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          lastTransitionTime: '2025-01-02T03:04:05.123+02:00',
          reason: 'PodReady',
          message: '',
        },
      ],
    },
  };
}

export function volumeBackup(): VolumeBackup {
  return {
    apiVersion: 'infra.basicoperator.dev/v1alpha1',
    kind: 'VolumeBackup',
    metadata: { name: 'db-backup-1', namespace: 'default' },
    spec: {
      machineName: 'db',
      machineUID: '6f1c9b52-3a52-4b4e-9f3e-0d1a2b3c4d5e',
      volumes: [
        { name: 'data', claimName: 'db-data' },
        { name: 'logs', claimName: 'db-logs' },
      ],
    },
    status: {
      phase: 'Completed',
      startTime: '2025-01-02T03:04:05Z',
      completionTime: '2025-01-02T03:05:05Z',
      volumes: [
        { name: 'data', backupClaimName: 'db-backup-1-data' },
        { name: 'logs', backupClaimName: 'db-backup-1-logs' },
      ],
      attempts: 1,
    },
  };
}

/**
 * Applies `changes` to `object` in place and returns it. Keys are dotted paths ("spec.volumes.0.name");
 * an undefined value deletes the field. Lets tests write values the TypeScript types forbid.
 */
export function edited<T>(object: T, changes: Record<string, unknown>): T {
  for (const [path, value] of Object.entries(changes)) {
    const segments = path.split('.');
    const last = segments.pop();
    let parent: unknown = object;
    for (const segment of segments) {
      parent = (parent as Record<string, unknown>)[segment];
      if (typeof parent !== 'object' || parent === null)
        throw new Error(`no object at ${segment} of ${path}`);
    }
    const container = parent as Record<string, unknown>;
    if (last === undefined) throw new Error('empty path');
    if (value === undefined) delete container[last];
    else container[last] = value;
  }
  return object;
}
