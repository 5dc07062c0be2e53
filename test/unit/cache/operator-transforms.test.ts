// What the operator's cache keeps of Pods, Jobs and claims (src/controllers/cache-transforms.ts), as
// configured in operatorManagerOptions, and that the reconciler tests' informers hold objects so
// transformed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { operatorManagerOptions } from '../../../src/controllers/index.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType, resourceId } from '../../../src/runtime/client/resource.ts';
import { FakeCluster } from '../../support/fake/cluster.ts';

function transformOf<T extends KubeObject>(type: ResourceType<T>): (obj: T) => T {
  const transform = operatorManagerOptions.cache?.byObject?.[resourceId(type)]?.transform;
  assert.ok(transform, `the operator transforms ${type.plural}`);
  return (obj) => transform(obj) as T;
}

const OWNER = {
  apiVersion: 'apps.basicoperator.dev/v1alpha1',
  blockOwnerDeletion: true,
  controller: true,
  kind: 'BasicReplicaSet',
  name: 'd-0-57cd469945',
  uid: 'e2b11909-c952-40e8-b516-41c8b84d9a8d',
};

/** A pod of a BasicDeployment as kwok runs it, from `kubectl get pod -o json --show-managed-fields`. */
function kwokPod(): V1Pod {
  const at = '2026-11-24T03:31:03Z' as unknown as Date;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      creationTimestamp: at,
      generateName: 'd-0-57cd469945-',
      generation: 1,
      labels: {
        app: 'd-0',
        'apps.basicoperator.dev/pod-template-hash': '57cd469945',
        'apps.basicoperator.dev/replicaset-pod': 'true',
        'app.kubernetes.io/managed-by': 'basic-operator',
      },
      annotations: { 'controller.kubernetes.io/pod-deletion-cost': '10', 'example.com/note': 'dropped' },
      managedFields: [{ apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {}, manager: 'kwok-controller' }],
      name: 'd-0-57cd469945-cz8nm',
      namespace: 'ns',
      ownerReferences: [OWNER],
      resourceVersion: '14876',
      uid: '18af33f7-1d3a-44fd-bce2-7d5ac124c9bd',
    },
    spec: {
      containers: [
        {
          image: 'registry.k8s.io/pause:3.10',
          imagePullPolicy: 'IfNotPresent',
          name: 'app',
          resources: {},
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          volumeMounts: [
            {
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
              name: 'kube-api-access-mst97',
              readOnly: true,
            },
          ],
        },
      ],
      dnsPolicy: 'ClusterFirst',
      enableServiceLinks: true,
      nodeName: 'kwok-node-0',
      preemptionPolicy: 'PreemptLowerPriority',
      priority: 0,
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      securityContext: {},
      serviceAccountName: 'default',
      terminationGracePeriodSeconds: 30,
      tolerations: [
        {
          effect: 'NoExecute',
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          tolerationSeconds: 300,
        },
      ],
      volumes: [{ name: 'kube-api-access-mst97', projected: { defaultMode: 420, sources: [] } }],
    },
    status: {
      conditions: [
        {
          lastProbeTime: null as unknown as Date,
          lastTransitionTime: at,
          status: 'True',
          type: 'Initialized',
        },
        { lastProbeTime: null as unknown as Date, lastTransitionTime: at, status: 'True', type: 'Ready' },
        {
          lastProbeTime: null as unknown as Date,
          lastTransitionTime: at,
          status: 'True',
          type: 'PodScheduled',
        },
      ],
      containerStatuses: [
        {
          image: 'registry.k8s.io/pause:3.10',
          imageID: '',
          lastState: {},
          name: 'app',
          ready: true,
          restartCount: 2,
          started: true,
          state: { running: { startedAt: at } },
        },
      ],
      phase: 'Running',
      podIP: '10.0.0.2',
      podIPs: [{ ip: '10.0.0.2' }],
      qosClass: 'BestEffort',
      startTime: at,
    },
  };
}

describe('the operator cache transforms', () => {
  it('Pod: identity, labels, owners, age, deletion cost, node, phase, conditions, container restarts and states', () => {
    const at = '2026-11-24T03:31:03Z';
    assert.deepEqual(transformOf(CoreTypes.Pod)(kwokPod()), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'd-0-57cd469945-cz8nm',
        namespace: 'ns',
        uid: '18af33f7-1d3a-44fd-bce2-7d5ac124c9bd',
        resourceVersion: '14876',
        creationTimestamp: at,
        labels: {
          app: 'd-0',
          'apps.basicoperator.dev/pod-template-hash': '57cd469945',
          'apps.basicoperator.dev/replicaset-pod': 'true',
          'app.kubernetes.io/managed-by': 'basic-operator',
        },
        ownerReferences: [OWNER],
        annotations: { 'controller.kubernetes.io/pod-deletion-cost': '10' },
      },
      spec: { nodeName: 'kwok-node-0' },
      status: {
        phase: 'Running',
        conditions: [
          { type: 'Initialized', status: 'True', lastTransitionTime: at },
          { type: 'Ready', status: 'True', lastTransitionTime: at },
          { type: 'PodScheduled', status: 'True', lastTransitionTime: at },
        ],
        containerStatuses: [{ name: 'app', restartCount: 2 }],
      },
    });
  });

  it("Pod of a PodMachine (its label): its IPs too, the PodMachine's addresses", () => {
    const pod = kwokPod();
    pod.metadata = { ...pod.metadata, labels: { 'infra.basicoperator.dev/podmachine': 'web' } };
    pod.status = { ...pod.status, podIPs: [{ ip: '10.0.0.2' }, { ip: 'fd00::2' }] };
    assert.deepEqual(transformOf(CoreTypes.Pod)(pod).status?.podIPs, [{ ip: '10.0.0.2' }, { ip: 'fd00::2' }]);
    assert.equal(transformOf(CoreTypes.Pod)(kwokPod()).status?.podIPs, undefined, 'not of any other pod');
  });

  it('Pod: why it failed or waits', () => {
    const pod = kwokPod();
    pod.status = {
      phase: 'Failed',
      reason: 'Evicted',
      message: 'low on memory',
      containerStatuses: [
        {
          name: 'machine',
          image: 'app:1',
          imageID: 'sha256:1',
          ready: false,
          restartCount: 0,
          state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } },
          lastState: {
            terminated: { exitCode: 137, reason: 'OOMKilled', containerID: 'c1', startedAt: new Date(0) },
          },
        },
        {
          name: 'copy',
          image: 'operator:1',
          imageID: 'sha256:2',
          ready: false,
          restartCount: 0,
          state: {
            terminated: { exitCode: 0, reason: 'Completed', message: '{"v":1}', startedAt: new Date(0) },
          },
        },
      ],
    };
    assert.deepEqual(transformOf(CoreTypes.Pod)(pod).status, {
      phase: 'Failed',
      reason: 'Evicted',
      message: 'low on memory',
      containerStatuses: [
        {
          name: 'machine',
          restartCount: 0,
          state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } },
          lastState: { terminated: { exitCode: 137, reason: 'OOMKilled' } },
        },
        // A copy pod's report: its termination message (volumebackup/logic/copy-record.ts).
        {
          name: 'copy',
          restartCount: 0,
          state: { terminated: { exitCode: 0, reason: 'Completed', message: '{"v":1}' } },
        },
      ],
    });
  });

  it("Job: identity, labels, owners, a copy's record, and where it stands; not its spec", () => {
    const job: V1Job = {
      metadata: {
        name: 'copy-1',
        namespace: 'ns',
        uid: 'j1',
        resourceVersion: '7',
        labels: { role: 'backup' },
        annotations: { 'infra.basicoperator.dev/copy-report': '{"v":1}', 'example.com/other': 'x' },
      },
      spec: { backoffLimit: 0, template: { spec: { containers: [{ name: 'copy', image: 'busybox' }] } } },
      status: {
        active: 1,
        ready: 0,
        startTime: new Date(0),
        uncountedTerminatedPods: {},
        conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: 'too long' }],
      },
    };
    assert.deepEqual(transformOf(CoreTypes.Job)(job), {
      metadata: {
        name: 'copy-1',
        namespace: 'ns',
        uid: 'j1',
        resourceVersion: '7',
        labels: { role: 'backup' },
        // The record of a copy attempt (volumebackup/logic/progress.ts); no other annotation.
        annotations: { 'infra.basicoperator.dev/copy-report': '{"v":1}' },
      },
      status: {
        conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: 'too long' }],
        active: 1,
        ready: 0,
      },
    });
  });

  it('PersistentVolumeClaim: identity, the restored-from mark, finalizers, size, class and phase', () => {
    const claim: V1PersistentVolumeClaim = {
      metadata: {
        name: 'web-data',
        namespace: 'ns',
        finalizers: ['kubernetes.io/pvc-protection'],
        annotations: {
          'infra.basicoperator.dev/restored-from': 'old/data',
          'pv.kubernetes.io/bind-completed': 'yes',
        },
      },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
        storageClassName: 'standard',
        volumeName: 'pv-1',
      },
      status: { phase: 'Bound', capacity: { storage: '2Gi' }, accessModes: ['ReadWriteOnce'] },
    };
    assert.deepEqual(transformOf(CoreTypes.PersistentVolumeClaim)(claim), {
      metadata: {
        name: 'web-data',
        namespace: 'ns',
        annotations: { 'infra.basicoperator.dev/restored-from': 'old/data' },
        // A backup claim's finalizer is held and let go by index (volumebackup/logic/backup-claims.ts).
        finalizers: ['kubernetes.io/pvc-protection'],
      },
      spec: { resources: { requests: { storage: '1Gi' } }, storageClassName: 'standard' },
      status: { phase: 'Bound', capacity: { storage: '2Gi' } },
    });
  });

  it('never throws on odd input: no status, no containers, no labels, nothing at all', () => {
    const pod = transformOf(CoreTypes.Pod);
    const odd: V1Pod[] = [
      {},
      { metadata: { name: 'p' } },
      { metadata: { name: 'p' }, spec: { containers: [] }, status: {} },
      { status: { phase: 'Pending', conditions: [], containerStatuses: [] } },
      { status: { containerStatuses: [{ name: 'c' } as never] } },
      { status: null as never, spec: null as never, metadata: { labels: null as never } },
    ];
    for (const p of odd) assert.doesNotThrow(() => pod(p), JSON.stringify(p));
    assert.deepEqual(pod({ metadata: { name: 'p' }, spec: { containers: [] }, status: {} }), {
      metadata: { name: 'p' },
    });
    assert.doesNotThrow(() => transformOf(CoreTypes.Job)({ status: {} }));
    assert.doesNotThrow(() => transformOf(CoreTypes.PersistentVolumeClaim)({ spec: {} }));
  });

  it('the reconciler tests read transformed objects: FakeCluster builds its informers with them', async () => {
    const cluster = new FakeCluster();
    cluster.seed(CoreTypes.Pod, kwokPod());
    for (const informer of [
      await cluster.informer(CoreTypes.Pod),
      await cluster.informer(CoreTypes.Pod, { labelSelector: 'apps.basicoperator.dev/replicaset-pod=true' }),
    ]) {
      const [cached] = informer.list();
      assert.equal(cached?.metadata?.name, 'd-0-57cd469945-cz8nm');
      assert.deepEqual(cached?.spec, { nodeName: 'kwok-node-0' });
    }
  });
});
