// reconcile() of the PodMachine controller against a fake API server and real informers filled from it
// (with the operator's cache selections: only objects with our managed-by label are cached): the
// claims, pod and restore Jobs it creates, the contract's status fields, terminal and transient
// failures, the stop handshake, and the children it takes over from a Machine of an older operator.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import {
  POD_MACHINE,
  type PodMachine,
  STOP_REQUESTED_ANNOTATION,
  VOLUME_BACKUP,
  type VolumeBackup,
  type VolumeManifest,
} from '../../../src/apis/index.ts';
import type { CachedClaim, CachedJob, CachedPod } from '../../../src/controllers/podmachine/cached.ts';
import { CONTROLLER_NAME } from '../../../src/controllers/podmachine/index.ts';
import {
  desiredClaim,
  desiredPod,
  desiredRestoreJob,
  type RestoreCopy,
} from '../../../src/controllers/podmachine/logic/children.ts';
import {
  RESTORE_FAILURE_ANNOTATION,
  RESTORED_FROM_ANNOTATION,
  RESTORED_MANIFEST_ANNOTATION,
} from '../../../src/controllers/podmachine/names.ts';
import {
  FOREIGN_OBJECT_RECHECK_MS,
  PodMachineReconciler,
} from '../../../src/controllers/podmachine/reconciler.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { eventsFor } from '../../../src/runtime/events/index.ts';
import { findCondition } from '../../../src/runtime/write/conditions.ts';
import { controllerReference } from '../../../src/runtime/write/owner-refs.ts';
import { FakeCluster } from '../../support/fake/cluster.ts';
import { type Harness, harness } from '../../support/fake/harness.ts';
import { OWNER, podMachine } from './fixtures.ts';

const NOW = new Date('2026-01-01T12:00:00Z');
const ONE_VOLUME = { volumes: [{ name: 'data', size: '1Gi', mountPath: '/data' }] };
const RESTORING = {
  volumes: [
    { name: 'data', size: '1Gi', mountPath: '/data', restoreFrom: { volumeBackup: 'old', volume: 'data' } },
  ],
};
const STOP = { [STOP_REQUESTED_ANNOTATION]: 'true' };
const MANIFEST: VolumeManifest = { files: 3, bytes: 4096, digest: `sha256:${'a'.repeat(64)}` };
const OTHER: VolumeManifest = { files: 2, bytes: 1024, digest: `sha256:${'b'.repeat(64)}` };
/** A restore Job's copy, as the reconciler makes it where root copies are admitted. */
const rootCopy = (backupClaimName: string): RestoreCopy => ({
  backupClaimName,
  image: 'basic-operator:dev',
  activeDeadlineSeconds: 3600,
  privilege: { mode: 'root' },
});
/** What the mover writes as its termination message on success. */
const report = (source: VolumeManifest, target: VolumeManifest) =>
  JSON.stringify({ v: 1, source, target, copyMs: 40, manifestMs: 7 });

/** A pod of `job` (its template, controlled by it) whose copy container ended with `exitCode`. */
function copyPod(job: V1Job, name: string, exitCode: number, message: string | undefined): V1Pod {
  const template = job.spec?.template;
  return {
    metadata: {
      name,
      namespace: 'ns',
      labels: template?.metadata?.labels ?? {},
      ownerReferences: [controllerReference(job, CoreTypes.Job)],
    },
    spec: template?.spec ?? { containers: [] },
    status: {
      phase: exitCode === 0 ? 'Succeeded' : 'Failed',
      containerStatuses: [
        {
          name: 'copy',
          image: 'basic-operator:dev',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode, ...(message !== undefined ? { message } : {}) } },
        },
      ],
    },
  };
}
const RUNNING: V1PodStatus = {
  phase: 'Running',
  conditions: [{ type: 'Ready', status: 'True' }],
  podIP: '10.0.0.7',
  podIPs: [{ ip: '10.0.0.7' }, { ip: 'fd00::7' }],
};

async function setup(pm: PodMachine, ...seed: Array<(cluster: FakeCluster) => void>) {
  const cluster = new FakeCluster({ now: () => NOW });
  cluster.seed(POD_MACHINE, pm);
  for (const s of seed) s(cluster);
  return harness<PodMachine>(
    cluster,
    { for: POD_MACHINE },
    async (c, events) =>
      new PodMachineReconciler({
        client: c.kubeClient,
        pods: await c.informer<CachedPod>(CoreTypes.Pod),
        claims: await c.informer<CachedClaim>(CoreTypes.PersistentVolumeClaim),
        jobs: await c.informer<CachedJob>(CoreTypes.Job),
        backups: await c.informer(VOLUME_BACKUP),
        events: eventsFor(events, CONTROLLER_NAME, POD_MACHINE),
        backupJobImage: 'basic-operator:dev',
        restoreDeadlineSeconds: 3600,
        now: () => NOW,
      }),
  );
}

const condition = (h: Harness<PodMachine>, type: string) =>
  findCondition(h.status.last('web')?.conditions, type);

const quota = (what: string) =>
  new ApiError(
    403,
    'Forbidden',
    `${what} is forbidden: exceeded quota: q, requested: ${what}=1, used: 0, limited: 0`,
  );

/** A foreign object of this name, without our label: the cache never shows it. */
const foreign = <T extends KubeObject>(obj: T): T => ({
  ...obj,
  metadata: { name: obj.metadata?.name, namespace: 'ns' },
});

/** `obj` as the Machine controller of an operator before PodMachines made it: controlled by OWNER. */
const fromOldMachine = <T extends KubeObject>(obj: T): T => ({
  ...obj,
  metadata: {
    ...obj.metadata,
    labels: {
      'app.kubernetes.io/managed-by': 'basic-operator',
      'infra.basicoperator.dev/machine': 'web',
    },
    ownerReferences: [OWNER],
  },
});

const ownerUids = (obj: KubeObject) => obj.metadata?.ownerReferences?.map((r) => `${r.kind}/${r.uid}`);

describe('PodMachineReconciler', () => {
  it('creates the claims, then the pod, at once; Pending while the claims bind', async () => {
    const pm = podMachine();
    const h = await setup(pm);
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), [
      'create PersistentVolumeClaim web-data',
      'create PersistentVolumeClaim web-logs',
      'create Pod web',
    ]);
    assert.deepEqual(
      h.client.writes().map((a) => a.body),
      [desiredClaim(pm, pm.spec.volumes![0]!), desiredClaim(pm, pm.spec.volumes![1]!), desiredPod(pm)],
    );
    assert.deepEqual(h.eventSummary(), ['Normal ClaimCreated', 'Normal ClaimCreated', 'Normal PodCreated']);
    const status = h.status.last('web');
    assert.equal(status?.phase, 'Pending', 'the claims are not bound yet');
    assert.equal(status?.ready, false);
    assert.equal(status?.providerID, 'pod://ns/web', 'the pod exists');
    assert.equal(status?.stopped, false);
    assert.equal(status?.failureReason, undefined);
    assert.deepEqual(status?.volumes, [
      { name: 'data', claimName: 'web-data', phase: 'Pending' },
      { name: 'logs', claimName: 'web-logs', phase: 'Pending' },
    ]);
    assert.equal(condition(h, 'VolumesReady')?.reason, 'ClaimsPending');
  });

  it('claims bound and the pod running and ready: Running, Ready, the contract fields, a Normal Running event, no writes', async () => {
    const pm = podMachine();
    const h = await setup(pm, (c) => {
      for (const v of pm.spec.volumes!)
        c.seed(CoreTypes.PersistentVolumeClaim, { ...desiredClaim(pm, v), status: { phase: 'Bound' } });
      c.seed(CoreTypes.Pod, { ...desiredPod(pm), status: RUNNING });
    });
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writes(), []);
    const status = h.status.last('web');
    assert.equal(status?.phase, 'Running');
    assert.equal(status?.ready, true);
    assert.equal(status?.providerID, 'pod://ns/web');
    assert.deepEqual(status?.addresses, [
      { type: 'InternalIP', address: '10.0.0.7' },
      { type: 'InternalIP', address: 'fd00::7' },
    ]);
    assert.deepEqual(status?.volumes, [
      { name: 'data', claimName: 'web-data', phase: 'Bound' },
      { name: 'logs', claimName: 'web-logs', phase: 'Bound' },
    ]);
    assert.deepEqual(status?.copyAs, { runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532 });
    assert.equal(status?.stopped, false);
    assert.equal(status?.observedGeneration, 1);
    assert.deepEqual(
      status?.conditions?.map((c) => [c.type, c.status, c.reason, c.observedGeneration]),
      [
        ['VolumesReady', 'True', 'ClaimsBound', 1],
        ['Ready', 'True', 'PodReady', 1],
      ],
    );
    assert.deepEqual(h.eventSummary(), ['Normal Running']);
  });

  it('reports whom its pod runs as (copyAs): its podSecurityContext over the defaults, none as root', async () => {
    const cases: Array<[PodMachine['spec']['podSecurityContext'], unknown]> = [
      [
        { runAsUser: 999, runAsGroup: 998, fsGroup: 997 },
        { runAsUser: 999, runAsGroup: 998, fsGroup: 997 },
      ],
      [{ runAsUser: 999 }, { runAsUser: 999, runAsGroup: 65532, fsGroup: 65532 }],
      [{ runAsUser: 0 }, undefined],
      // Beyond what a pod may have: the API server refuses the pod, and the status must say so.
      [{ runAsUser: 3000000000 }, undefined],
    ];
    for (const [podSecurityContext, copyAs] of cases) {
      const pm = podMachine({ ...ONE_VOLUME, podSecurityContext });
      const h = await setup(pm);
      await h.reconcile('web');
      assert.deepEqual(h.status.last('web')?.copyAs, copyAs, JSON.stringify(podSecurityContext));
    }
  });

  // Another container's status comes first: the machine container's own is found by name.
  const sidecar = { name: 'sidecar', image: 'log:1', imageID: '', ready: false, restartCount: 0 };
  const failedPods: { what: string; status: V1PodStatus; message: RegExp }[] = [
    {
      what: 'its container ended',
      status: {
        phase: 'Failed',
        containerStatuses: [
          { ...sidecar, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
          { ...sidecar, name: 'machine', state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } },
        ],
      },
      message: /^pod web has failed: container machine terminated \(OOMKilled\) with exit code 137;/,
    },
    {
      what: 'evicted, after its container had ended once',
      status: {
        phase: 'Failed',
        reason: 'Evicted',
        message: 'The node was low on resource: memory.',
        containerStatuses: [
          sidecar,
          {
            ...sidecar,
            name: 'machine',
            state: {},
            lastState: { terminated: { exitCode: 1, reason: 'Error' } },
          },
        ],
      },
      message:
        /^pod web has failed: Evicted; The node was low on resource: memory\.; container machine terminated \(Error\) with exit code 1;/,
    },
  ];
  for (const f of failedPods) {
    it(`a pod that failed (${f.what}): terminal, Failed with failureReason PodFailed, a Warning, and the pod kept`, async () => {
      const pm = podMachine();
      const h = await setup(pm, (c) => {
        for (const v of pm.spec.volumes!)
          c.seed(CoreTypes.PersistentVolumeClaim, { ...desiredClaim(pm, v), status: { phase: 'Bound' } });
        c.seed(CoreTypes.Pod, { ...desiredPod(pm), status: f.status });
      });
      assert.equal(await h.reconcile('web'), undefined, 'no retry: the pod is kept for a person to look at');
      assert.deepEqual(h.client.writes(), []);
      const status = h.status.last('web');
      assert.equal(status?.phase, 'Failed');
      assert.equal(status?.failureReason, 'PodFailed');
      assert.match(status?.failureMessage ?? '', f.message);
      assert.equal(condition(h, 'Ready')?.reason, 'PodFailed');
      assert.deepEqual(h.eventSummary(), ['Warning PodFailed']);
    });
  }

  it('Ready follows the pod: false again when its readiness probe stops passing, naming the probe; true again after', async () => {
    const pm = podMachine({
      ...ONE_VOLUME,
      readinessProbe: { exec: { command: ['pg_isready', '-q'] }, periodSeconds: 5 },
    });
    const container = {
      name: 'machine',
      image: 'app:1',
      imageID: '',
      restartCount: 0,
      started: true,
      state: { running: {} },
    };
    const withStatus = (status: V1PodStatus) => ({ ...desiredPod(pm), status });
    const h = await setup(pm, (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, {
        ...desiredClaim(pm, pm.spec.volumes![0]!),
        status: { phase: 'Bound' },
      });
      c.seed(CoreTypes.Pod, withStatus({ ...RUNNING, containerStatuses: [{ ...container, ready: true }] }));
    });
    await h.reconcile('web');
    assert.equal(h.status.last('web')?.ready, true);

    const unready: V1PodStatus = {
      ...RUNNING,
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'ContainersNotReady',
          message: 'containers with unready status: [machine]',
        },
      ],
      containerStatuses: [{ ...container, ready: false }],
    };
    h.cluster.server.update(CoreTypes.Pod, withStatus(unready), 'status');
    await h.cluster.sync();
    await h.reconcile('web');
    let status = h.status.last('web');
    assert.equal(status?.ready, false);
    assert.equal(status?.phase, 'Running', 'the pod still runs');
    assert.equal(condition(h, 'Ready')?.reason, 'PodNotReady');
    assert.equal(
      condition(h, 'Ready')?.message,
      'pod web is running but not ready: container machine is not passing its readinessProbe (exec pg_isready -q)',
    );

    const crashing: V1PodStatus = {
      ...unready,
      containerStatuses: [
        {
          ...container,
          ready: false,
          restartCount: 3,
          state: {
            waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' },
          },
          lastState: { terminated: { exitCode: 137, reason: 'Error' } },
        },
      ],
    };
    h.cluster.server.update(CoreTypes.Pod, withStatus(crashing), 'status');
    await h.cluster.sync();
    await h.reconcile('web');
    assert.equal(
      condition(h, 'Ready')?.message,
      'pod web is running but not ready: container machine is waiting: CrashLoopBackOff (back-off 40s restarting failed container); restarted 3 times, last ended (Error) with exit code 137',
    );

    h.cluster.server.update(
      CoreTypes.Pod,
      withStatus({ ...RUNNING, containerStatuses: [{ ...container, ready: true }] }),
      'status',
    );
    await h.cluster.sync();
    await h.reconcile('web');
    status = h.status.last('web');
    assert.equal(status?.ready, true);
    assert.equal(condition(h, 'Ready')?.reason, 'PodReady');
  });

  it('a failed pod deleted by a person: a new pod, and the failure cleared', async () => {
    const pm = podMachine(ONE_VOLUME);
    const h = await setup(pm, (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, {
        ...desiredClaim(pm, pm.spec.volumes![0]!),
        status: { phase: 'Bound' },
      });
      c.seed(CoreTypes.Pod, { ...desiredPod(pm), status: { phase: 'Failed', reason: 'Evicted' } });
    });
    await h.reconcile('web');
    assert.equal(h.status.last('web')?.failureReason, 'PodFailed');
    h.cluster.server.delete(CoreTypes.Pod, 'ns', 'web');
    await h.cluster.sync();
    await h.reconcile('web');
    assert.deepEqual(h.client.writeSummary(), ['create Pod web']);
    const status = h.status.last('web');
    assert.equal(status?.failureReason, undefined);
    assert.equal(status?.failureMessage, undefined);
    assert.equal(status?.phase, 'Provisioning');
  });

  it('a pod the API server refuses: transient, PodRefused without failureReason, a Warning, a requeue with backoff; then the retry creates it', async () => {
    const h = await setup(podMachine());
    h.client.fail({ verb: 'create', kind: 'Pod' }, quota('pods'), { times: 1 });
    assert.deepEqual(await h.reconcile('web'), { requeue: true });
    const status = h.status.last('web');
    assert.notEqual(status?.phase, 'Failed');
    assert.equal(status?.failureReason, undefined);
    assert.equal(condition(h, 'Ready')?.reason, 'PodRefused');
    assert.match(condition(h, 'Ready')?.message ?? '', /forbidden.*quota.*retrying with backoff/);
    assert.deepEqual(h.eventSummary().at(-1), 'Warning PodRefused');

    await h.cluster.sync();
    h.client.clearActions();
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['create Pod web']);
    assert.equal(
      condition(h, 'Ready')?.reason,
      'VolumesNotReady',
      'no longer refused: the claims still bind',
    );
  });

  it('a claim the API server refuses: transient ClaimRefused, a requeue, and no pod without it', async () => {
    const h = await setup(podMachine());
    h.client.fail(
      { verb: 'create', kind: 'PersistentVolumeClaim', name: 'web-data' },
      quota('persistentvolumeclaims'),
    );
    assert.deepEqual(await h.reconcile('web'), { requeue: true });
    assert.deepEqual(h.client.writeSummary({ verb: 'create', kind: 'Pod' }), []);
    assert.equal(h.status.last('web')?.failureReason, undefined);
    assert.equal(h.status.last('web')?.phase, 'Pending');
    assert.equal(condition(h, 'VolumesReady')?.reason, 'ClaimRefused');
    assert.match(condition(h, 'Ready')?.message ?? '', /refused claim web-data: .*forbidden.*quota/);
    assert.deepEqual(h.eventSummary().at(-1), 'Warning ClaimRefused');
  });

  it('a foreign claim of its claim name (invisible to the cache): ClaimConflict after a live read, terminal, looked at again later', async () => {
    const pm = podMachine(ONE_VOLUME);
    const h = await setup(pm, (c) =>
      c.seed(CoreTypes.PersistentVolumeClaim, foreign(desiredClaim(pm, pm.spec.volumes![0]!))),
    );
    assert.deepEqual(await h.reconcile('web'), { requeueAfterMs: FOREIGN_OBJECT_RECHECK_MS });
    assert.deepEqual(
      h.client.actions.map((a) => `${a.verb} ${a.kind} ${a.name} ${a.error?.reason ?? ''}`.trim()),
      ['create PersistentVolumeClaim web-data AlreadyExists', 'get PersistentVolumeClaim web-data'],
    );
    const status = h.status.last('web');
    assert.equal(status?.phase, 'Failed');
    assert.equal(status?.failureReason, 'ClaimConflict');
    assert.match(
      status?.failureMessage ?? '',
      /claim web-data exists and is not controlled by this PodMachine/,
    );
    assert.equal(condition(h, 'VolumesReady')?.reason, 'ClaimConflict');
    assert.deepEqual(h.eventSummary(), ['Warning ClaimConflict']);

    h.cluster.server.delete(CoreTypes.PersistentVolumeClaim, 'ns', 'web-data');
    h.client.clearActions();
    await h.reconcile('web');
    assert.deepEqual(h.client.writeSummary(), ['create PersistentVolumeClaim web-data', 'create Pod web']);
    assert.equal(h.status.last('web')?.failureReason, undefined, 'cleared once the foreign claim is gone');
  });

  it('a foreign pod of its name (invisible to the cache): PodConflict after a live read', async () => {
    const pm = podMachine({ volumes: [] });
    const h = await setup(pm, (c) => c.seed(CoreTypes.Pod, foreign(desiredPod(pm))));
    assert.deepEqual(await h.reconcile('web'), { requeueAfterMs: FOREIGN_OBJECT_RECHECK_MS });
    assert.deepEqual(
      h.client.actions.map((a) => `${a.verb} ${a.kind} ${a.name}`),
      ['create Pod web', 'get Pod web'],
    );
    assert.equal(h.status.last('web')?.failureReason, 'PodConflict');
    assert.equal(h.status.last('web')?.providerID, undefined, 'not our pod');
    assert.match(condition(h, 'Ready')?.message ?? '', /pod web exists and is not controlled/);
  });

  it('being deleted without a stop request: creates nothing (the garbage collector takes the children)', async () => {
    const pm = podMachine();
    const h = await setup({
      ...pm,
      metadata: { ...pm.metadata, finalizers: ['example.com/hold'], deletionTimestamp: NOW },
    });
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writes(), []);
  });

  describe('the stop handshake', () => {
    it('deletes the pod (by uid), keeps the claims, Stopping; then stopped: true once a live read shows the pod gone', async () => {
      const pm = podMachine({}, { annotations: STOP });
      const h = await setup(pm, (c) => {
        for (const v of pm.spec.volumes!)
          c.seed(CoreTypes.PersistentVolumeClaim, { ...desiredClaim(pm, v), status: { phase: 'Bound' } });
        c.seed(CoreTypes.Pod, { ...desiredPod(pm), status: RUNNING });
      });
      const pod = h.cluster.server.get(CoreTypes.Pod, 'ns', 'web');
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writeSummary(), ['delete Pod web']);
      assert.deepEqual(h.client.writes()[0]?.body, {
        propagationPolicy: 'Background',
        preconditions: { uid: pod.metadata?.uid },
      });
      assert.equal(h.status.last('web')?.phase, 'Stopping');
      assert.equal(h.status.last('web')?.stopped, false, 'the pod may still run: the cache showed it');
      assert.equal(condition(h, 'Ready')?.reason, 'Stopping');
      assert.deepEqual(h.eventSummary(), ['Normal Stopping']);

      await h.cluster.sync();
      h.client.clearActions();
      await h.reconcile('web');
      assert.deepEqual(
        h.client.actions.map((a) => `${a.verb} ${a.kind} ${a.name}`),
        ['get Pod web'],
        'the cache shows no pod: read live before saying stopped; the claims stay',
      );
      const status = h.status.last('web');
      assert.equal(status?.stopped, true);
      assert.equal(status?.phase, 'Stopped');
      assert.equal(status?.ready, false);
      assert.deepEqual(status?.addresses, []);
      assert.equal(status?.providerID, 'pod://ns/web');
      assert.deepEqual(status?.volumes, [
        { name: 'data', claimName: 'web-data', phase: 'Bound' },
        { name: 'logs', claimName: 'web-logs', phase: 'Bound' },
      ]);
      assert.deepEqual(status?.copyAs, { runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532 });
      assert.equal(condition(h, 'Ready')?.reason, 'Stopped');
      assert.deepEqual(h.eventSummary(), ['Normal Stopping', 'Normal Stopped']);
      assert.equal(h.cluster.server.list(CoreTypes.PersistentVolumeClaim).length, 2);
    });

    it('a pod the cache does not show yet is read live: deleted, and not stopped', async () => {
      const pm = podMachine(ONE_VOLUME, { annotations: STOP });
      const h = await setup(pm);
      h.cluster.seed(CoreTypes.Pod, desiredPod(pm)); // after the caches were filled
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary(), ['delete Pod web']);
      assert.equal(h.status.last('web')?.stopped, false);
    });

    it('never creates compute again: no pod, no restore Job, not even a missing claim', async () => {
      const pm = podMachine(RESTORING, { annotations: STOP });
      const h = await setup(pm);
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writes(), []);
      assert.equal(h.status.last('web')?.stopped, true);
      assert.deepEqual(h.status.last('web')?.volumes, [{ name: 'data', claimName: 'web-data' }]);
    });

    it('a restore Job still copying, which the cache does not show yet, is read live: Stopping, and the Job deleted in the foreground', async () => {
      const pm = podMachine(RESTORING, { annotations: STOP });
      const h = await setup(pm);
      h.cluster.seed(CoreTypes.Job, desiredRestoreJob(pm, pm.spec.volumes![0]!, rootCopy('old-data')));
      await h.reconcile('web');
      assert.equal(h.status.last('web')?.phase, 'Stopping', 'a restore Job still runs: not stopped');
      assert.equal(h.status.last('web')?.stopped, false);
      const deleted = h.client.writes({ verb: 'delete', kind: 'Job' });
      assert.deepEqual(
        deleted.map((a) => [a.name, (a.body as { propagationPolicy?: string }).propagationPolicy]),
        [['web-data-restore', 'Foreground']],
      );
      const left = h.cluster.server.get(CoreTypes.Job, 'ns', 'web-data-restore');
      assert.ok(left.metadata?.deletionTimestamp, 'the Job is being deleted, its pods first');
    });
  });

  describe('restoring a volume from a VolumeBackup', () => {
    const completed: VolumeBackup = {
      apiVersion: VOLUME_BACKUP.apiVersion,
      kind: VOLUME_BACKUP.kind,
      metadata: { name: 'old', namespace: 'ns', uid: 'uid-old' },
      spec: {
        machineName: 'old',
        machineUID: 'uid-old-machine',
        volumes: [{ name: 'data', claimName: 'old-data' }],
      },
      status: {
        phase: 'Completed',
        volumes: [{ name: 'data', backupClaimName: 'old-data-backup', manifest: MANIFEST }],
      },
    };
    /** A VolumeBackup recorded before copies were verified: no manifest. */
    const unverified: VolumeBackup = {
      ...completed,
      status: { phase: 'Completed', volumes: [{ name: 'data', backupClaimName: 'old-data-backup' }] },
    };
    /** The backup claim, as the VolumeBackup controller makes it: our label, so cached. */
    const backupClaim =
      (status: V1PersistentVolumeClaim['status'] = { phase: 'Bound' }) =>
      (c: FakeCluster) =>
        c.seed(CoreTypes.PersistentVolumeClaim, {
          metadata: {
            name: 'old-data-backup',
            namespace: 'ns',
            labels: { 'app.kubernetes.io/managed-by': 'basic-operator' },
          },
          status,
        });
    const restoreCopy = { ...rootCopy('old-data-backup'), expect: MANIFEST };

    /** The claim, the restore Job ended as `condition` says, and its copy pods (each `[exitCode, message]`). */
    function finishedRestore(
      pm: PodMachine,
      backup: VolumeBackup,
      condition: { type: string; reason?: string },
      pods: Array<[number, string | undefined]>,
      claimAnnotations?: Record<string, string>,
    ) {
      return (c: FakeCluster) => {
        c.seed(VOLUME_BACKUP, backup);
        const claim = desiredClaim(pm, pm.spec.volumes![0]!);
        if (claimAnnotations) claim.metadata = { ...claim.metadata, annotations: claimAnnotations };
        c.seed(CoreTypes.PersistentVolumeClaim, { ...claim, status: { phase: 'Bound' } });
        const [job] = c.seed(CoreTypes.Job, {
          ...desiredRestoreJob(pm, pm.spec.volumes![0]!, restoreCopy),
          status: { conditions: [{ ...condition, status: 'True' }] },
        });
        pods.forEach(([exitCode, message], i) => {
          c.seed(CoreTypes.Pod, copyPod(job!, `web-data-restore-x${i + 1}`, exitCode, message));
        });
      };
    }

    const annotationsOf = (h: Harness<PodMachine>) =>
      h.cluster.server.get<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim, 'ns', 'web-data')
        .metadata?.annotations;

    it('asks admission (a dry run) whether a root copy may run, then creates the restore Job: the mover, as root, expecting the manifest the backup recorded; no pod until the restore is done', async () => {
      const pm = podMachine(RESTORING);
      const h = await setup(pm, (c) => c.seed(VOLUME_BACKUP, completed), backupClaim());
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writeSummary(), [
        'create PersistentVolumeClaim web-data',
        'create Pod web-data-restore- (dry run)',
        'create Job web-data-restore',
      ]);
      const job = desiredRestoreJob(pm, pm.spec.volumes![0]!, restoreCopy);
      assert.deepEqual(h.client.writes({ kind: 'Job' })[0]?.body, job);
      assert.deepEqual(
        (h.client.writes({ kind: 'Pod' })[0]?.body as V1Pod | undefined)?.spec,
        job.spec?.template.spec,
        'the probe is the root copy pod itself',
      );
      assert.ok(job.spec?.template.spec?.containers[0]?.args?.includes(`3:4096:${MANIFEST.digest}`));
      assert.equal(h.cluster.server.list(CoreTypes.Pod).length, 0, 'the dry run stored nothing');
      assert.deepEqual(h.eventSummary(), ['Normal ClaimCreated', 'Normal RestoreStarted']);
      assert.match(
        h.events.events[1]?.note ?? '',
        /checked against its manifest \(3 files, 4096 bytes, .*\), with Job web-data-restore as root/,
      );
      assert.equal(h.status.last('web')?.providerID, undefined, 'no pod yet');
    });

    it('where Pod Security refuses a root copy pod: the restore Job runs as uid 65532 and tells the mover the level', async () => {
      const pm = podMachine(RESTORING);
      const h = await setup(pm, (c) => c.seed(VOLUME_BACKUP, completed), backupClaim());
      h.client.fail(
        { verb: 'create', kind: 'Pod', name: 'web-data-restore-' },
        new ApiError(
          403,
          'Forbidden',
          'pods "web-data-restore-abcde" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)',
        ),
      );
      await h.reconcile('web');
      const nonroot = {
        mode: 'nonroot',
        uid: 65532,
        gid: 65532,
        fsGroup: 65532,
        level: 'restricted',
      } as const;
      assert.deepEqual(
        h.client.writes({ verb: 'create', kind: 'Job' })[0]?.body,
        desiredRestoreJob(pm, pm.spec.volumes![0]!, { ...restoreCopy, privilege: nonroot }),
      );
      assert.match(
        h.events.events.at(-1)?.note ?? '',
        /as uid 65532, gid 65532, fsGroup 65532 \(Pod Security "restricted" refuses a root copy/,
      );
      assert.equal(h.status.last('web')?.failureReason, undefined);
    });

    const lostClaims: { what: string; seed: (c: FakeCluster) => void; says: string; live: boolean }[] = [
      { what: 'missing', seed: () => undefined, says: 'does not exist', live: true },
      {
        what: 'being deleted',
        seed: (c) => {
          backupClaim()(c);
          c.server.patch(CoreTypes.PersistentVolumeClaim, {
            namespace: 'ns',
            name: 'old-data-backup',
            patchType: 'merge',
            body: { metadata: { finalizers: ['kubernetes.io/pvc-protection'] } },
          });
          c.server.delete(CoreTypes.PersistentVolumeClaim, 'ns', 'old-data-backup');
        },
        says: 'is being deleted',
        live: true,
      },
      { what: 'Pending', seed: backupClaim({ phase: 'Pending' }), says: 'is Pending, not Bound', live: true },
    ];
    for (const l of lostClaims) {
      it(`a backup claim ${l.what}: BackupClaimLost at once, terminal, naming the claim (read live first); no Job`, async () => {
        const pm = podMachine(RESTORING);
        const h = await setup(pm, (c) => c.seed(VOLUME_BACKUP, completed), l.seed);
        assert.equal(await h.reconcile('web'), undefined);
        assert.deepEqual(h.client.writeSummary(), ['create PersistentVolumeClaim web-data']);
        assert.ok(
          h.client.actions.some((a) => a.verb === 'get' && a.name === 'old-data-backup'),
          'not on the cache alone',
        );
        const status = h.status.last('web');
        assert.equal(status?.phase, 'Failed');
        assert.equal(status?.failureReason, 'BackupClaimLost');
        assert.match(
          status?.failureMessage ?? '',
          new RegExp(`backup claim old-data-backup of volume data ${l.says}`),
        );
        assert.equal(condition(h, 'VolumesReady')?.reason, 'BackupClaimLost');
        assert.deepEqual(h.eventSummary(), ['Normal ClaimCreated', 'Warning BackupClaimLost']);
      });
    }

    it('a backup claim the cache does not show yet (Bound, live): the restore starts', async () => {
      const pm = podMachine(RESTORING);
      const h = await setup(pm, (c) => c.seed(VOLUME_BACKUP, completed));
      backupClaim()(h.cluster); // after the caches were filled
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary({ kind: 'Job' }), ['create Job web-data-restore']);
    });

    it("once the Job succeeded and its copy pod's report equals the backup's manifest: records it on the claim, then releases the copy pod, then creates the pod", async () => {
      const pm = podMachine(RESTORING);
      const h = await setup(
        pm,
        finishedRestore(pm, completed, { type: 'Complete' }, [[0, report(MANIFEST, MANIFEST)]]),
      );
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary(), [
        'patch PersistentVolumeClaim web-data',
        'delete Pod web-data-restore-x1',
        'create Pod web',
      ]);
      assert.deepEqual(h.client.writes({ verb: 'patch' })[0]?.body, {
        metadata: {
          annotations: {
            [RESTORED_FROM_ANNOTATION]: 'old/data',
            [RESTORED_MANIFEST_ANNOTATION]: `3:4096:${MANIFEST.digest}`,
            [RESTORE_FAILURE_ANNOTATION]: null,
          },
        },
      });
      assert.deepEqual(h.eventSummary(), ['Normal RestoreCompleted', 'Normal PodCreated']);
      assert.match(
        h.events.events[0]?.note ?? '',
        /verified: 3 files, 4096 bytes, sha256:a{64}, as the backup recorded/,
      );
    });

    it("a restored tree that differs from the backup's manifest: RestoreVerificationFailed, recorded before the copy pod goes; the pod never starts, also once the copy pod is gone", async () => {
      const pm = podMachine(RESTORING);
      const h = await setup(
        pm,
        finishedRestore(pm, completed, { type: 'Complete' }, [[0, report(MANIFEST, OTHER)]]),
      );
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writeSummary(), [
        'patch PersistentVolumeClaim web-data',
        'delete Pod web-data-restore-x1',
      ]);
      const expected =
        /the restored tree does not match the backup: expected 3 files, 4096 bytes, sha256:a{64}, found 2 files, 1024 bytes, sha256:b{64}; the pod is not started/;
      const status = h.status.last('web');
      assert.equal(status?.phase, 'Failed');
      assert.equal(status?.failureReason, 'RestoreVerificationFailed');
      assert.match(status?.failureMessage ?? '', expected);
      assert.equal(condition(h, 'VolumesReady')?.reason, 'RestoreVerificationFailed');
      assert.deepEqual(h.eventSummary(), ['Warning RestoreVerificationFailed']);
      assert.match(annotationsOf(h)?.[RESTORE_FAILURE_ANNOTATION] ?? '', /does not match the backup/);
      assert.equal(annotationsOf(h)?.[RESTORED_FROM_ANNOTATION], undefined);

      await h.cluster.sync();
      h.client.clearActions();
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writes(), [], 'the record stands; no pod');
      assert.equal(h.status.last('web')?.failureReason, 'RestoreVerificationFailed');
      assert.match(h.status.last('web')?.failureMessage ?? '', expected);
    });

    it('a Job that succeeded whose copy pod is gone, in the cache and live, without a report: RestoreVerificationFailed, never the pod', async () => {
      const pm = podMachine(RESTORING);
      const h = await setup(pm, finishedRestore(pm, completed, { type: 'Complete' }, []));
      await h.reconcile('web');
      assert.deepEqual(
        h.client.actions.map((a) => `${a.verb} ${a.kind} ${a.name}`),
        ['get PersistentVolumeClaim web-data', 'list Pod ', 'patch PersistentVolumeClaim web-data'],
        'read live before judging, then recorded',
      );
      assert.equal(h.status.last('web')?.failureReason, 'RestoreVerificationFailed');
      assert.match(h.status.last('web')?.failureMessage ?? '', /copy pod is gone and left no report/);
    });

    it('a copy pod whose termination message is no report: RestoreVerificationFailed', async () => {
      const pm = podMachine(RESTORING);
      const h = await setup(pm, finishedRestore(pm, completed, { type: 'Complete' }, [[0, 'done\n']]));
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary({ kind: 'Pod' }), ['delete Pod web-data-restore-x1']);
      assert.equal(h.status.last('web')?.failureReason, 'RestoreVerificationFailed');
      assert.match(
        h.status.last('web')?.failureMessage ?? '',
        /report of its copy pod web-data-restore-x1 cannot be read \("done"\)/,
      );
    });

    it('a copy pod the cache still shows running while its Job is Complete: its report is read live', async () => {
      const pm = podMachine(RESTORING);
      const h = await setup(
        pm,
        finishedRestore(pm, completed, { type: 'Complete' }, [[0, report(MANIFEST, MANIFEST)]]),
      );
      // The cache saw the pod running; the API server has it finished.
      const finished = h.cluster.server.get<V1Pod>(CoreTypes.Pod, 'ns', 'web-data-restore-x1');
      h.cluster.server.update(CoreTypes.Pod, { ...finished, status: { phase: 'Running' } }, 'status');
      await h.cluster.sync();
      h.cluster.server.update(
        CoreTypes.Pod,
        { ...finished, metadata: { ...finished.metadata, resourceVersion: undefined } },
        'status',
      );
      h.client.clearActions();
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary(), [
        'patch PersistentVolumeClaim web-data',
        'delete Pod web-data-restore-x1',
        'create Pod web',
      ]);
      assert.ok(h.client.actions.some((a) => a.verb === 'list' && a.kind === 'Pod'));
    });

    it('a backup recorded before copies were verified: the copy checked against its source is accepted, with a Normal Event that says it was not checked against a recorded manifest', async () => {
      const pm = podMachine(RESTORING);
      const h = await setup(
        pm,
        finishedRestore(pm, unverified, { type: 'Complete' }, [[0, report(OTHER, OTHER)]]),
      );
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary(), [
        'patch PersistentVolumeClaim web-data',
        'delete Pod web-data-restore-x1',
        'create Pod web',
      ]);
      assert.deepEqual(h.eventSummary(), ['Normal RestoreCompleted', 'Normal PodCreated']);
      assert.match(h.events.events[0]?.note ?? '', /not against a recorded manifest/);
    });

    it('a restore Job started from such a backup expects nothing', async () => {
      const pm = podMachine(RESTORING);
      const h = await setup(pm, (c) => c.seed(VOLUME_BACKUP, unverified), backupClaim());
      await h.reconcile('web');
      const job = h.client.writes({ verb: 'create', kind: 'Job' })[0]?.body as V1Job;
      assert.deepEqual(job, desiredRestoreJob(pm, pm.spec.volumes![0]!, rootCopy('old-data-backup')));
      assert.ok(!job.spec?.template.spec?.containers[0]?.args?.includes('--expect'));
      assert.match(h.events.events.at(-1)?.note ?? '', /records no manifest to check against/);
    });

    it('a failed restore copy: its last words reach a Warning RestoreCopyFailed and the failure message, recorded on the claim before its pod is deleted, and still there after', async () => {
      const pm = podMachine(RESTORING);
      const said = 'walking /source\nNotPermitted: /target/pgdata: chown to 999:999: operation not permitted';
      const h = await setup(
        pm,
        finishedRestore(pm, completed, { type: 'Failed', reason: 'BackoffLimitExceeded' }, [[1, said]]),
      );
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writeSummary(), [
        'patch PersistentVolumeClaim web-data',
        'delete Pod web-data-restore-x1',
      ]);
      assert.deepEqual(h.eventSummary(), ['Warning RestoreCopyFailed', 'Warning RestoreFailed']);
      assert.match(h.events.events[0]?.note ?? '', /chown to 999:999: operation not permitted$/);
      const message = h.status.last('web')?.failureMessage ?? '';
      assert.equal(h.status.last('web')?.failureReason, 'RestoreFailed');
      assert.match(
        message,
        /restore Job web-data-restore failed \(BackoffLimitExceeded\); its copy pod said: walking \/source\nNotPermitted: .*; delete the Job to try again/,
      );

      await h.cluster.sync();
      h.client.clearActions();
      await h.reconcile('web');
      assert.deepEqual(h.client.writes(), []);
      assert.equal(h.status.last('web')?.failureMessage, message, 'the copy pod is gone, its words are not');
    });

    it('a failed restore Job without pods (its deadline passed before one ran): terminal RestoreFailed, recorded, no pod', async () => {
      const pm = podMachine(RESTORING);
      const h = await setup(
        pm,
        finishedRestore(pm, completed, { type: 'Failed', reason: 'DeadlineExceeded' }, []),
      );
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writeSummary(), ['patch PersistentVolumeClaim web-data']);
      const status = h.status.last('web');
      assert.equal(status?.phase, 'Failed');
      assert.equal(status?.failureReason, 'RestoreFailed');
      assert.match(
        status?.failureMessage ?? '',
        /restore Job web-data-restore failed \(DeadlineExceeded\); delete the Job/,
      );
      assert.deepEqual(h.eventSummary(), ['Warning RestoreFailed']);
    });

    it('a claim already marked restored: no restore Job, not even with the backup gone, and the pod', async () => {
      const pm = podMachine(RESTORING);
      const claim = desiredClaim(pm, pm.spec.volumes![0]!);
      claim.metadata = { ...claim.metadata, annotations: { [RESTORED_FROM_ANNOTATION]: 'old/data' } };
      const h = await setup(pm, (c) =>
        c.seed(CoreTypes.PersistentVolumeClaim, { ...claim, status: { phase: 'Bound' } }),
      );
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writeSummary(), ['create Pod web']);
      assert.equal(condition(h, 'VolumesReady')?.reason, 'ClaimsBound');
    });

    it('after a restart: a claim marked restored releases the pods its finished Job left behind, and the pod starts', async () => {
      const pm = podMachine(RESTORING);
      const h = await setup(
        pm,
        finishedRestore(pm, completed, { type: 'Complete' }, [[0, report(MANIFEST, MANIFEST)]], {
          [RESTORED_FROM_ANNOTATION]: 'old/data',
        }),
      );
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary(), ['delete Pod web-data-restore-x1', 'create Pod web']);
    });

    it('a VolumeBackup that does not exist: transient, Pending with BackupNotFound and a Warning, no pod', async () => {
      const pm = podMachine({
        volumes: [{ ...RESTORING.volumes[0]!, restoreFrom: { volumeBackup: 'nowhere', volume: 'data' } }],
      });
      const h = await setup(pm);
      assert.equal(await h.reconcile('web'), undefined, 'the VolumeBackup watch wakes it');
      assert.deepEqual(h.client.writeSummary(), ['create PersistentVolumeClaim web-data']);
      const status = h.status.last('web');
      assert.equal(status?.phase, 'Pending');
      assert.equal(status?.ready, false);
      assert.equal(status?.failureReason, undefined);
      assert.equal(condition(h, 'VolumesReady')?.reason, 'BackupNotFound');
      assert.match(
        condition(h, 'VolumesReady')?.message ?? '',
        /volume data restores from VolumeBackup nowhere, which does not exist in this namespace/,
      );
      assert.deepEqual(h.eventSummary(), ['Normal ClaimCreated', 'Warning BackupNotFound']);
    });
  });

  describe('children of a Machine from an operator before PodMachines', () => {
    /** What such a Machine left running: its claims Bound and its pod Ready, controlled by OWNER. */
    function oldMachineChildren(pm: PodMachine) {
      return (c: FakeCluster) => {
        for (const v of pm.spec.volumes!) {
          c.seed(CoreTypes.PersistentVolumeClaim, {
            ...fromOldMachine(desiredClaim(pm, v)),
            status: { phase: 'Bound' },
          });
        }
        c.seed(CoreTypes.Pod, { ...fromOldMachine(desiredPod(pm)), status: RUNNING });
      };
    }

    it('are re-parented to its PodMachine (guarded JSON patches), neither recreated nor called foreign', async () => {
      const pm = podMachine({}, { owner: OWNER });
      const h = await setup(pm, oldMachineChildren(pm));
      const before = h.cluster.server.get<V1Pod>(CoreTypes.Pod, 'ns', 'web');
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writeSummary(), [
        'patch PersistentVolumeClaim web-data',
        'patch PersistentVolumeClaim web-logs',
        'patch Pod web',
      ]);
      assert.ok(h.client.writes().every((a) => a.patchType === 'json'));
      assert.deepEqual((h.client.writes().at(-1)?.body as unknown[] | undefined)?.slice(0, 2), [
        { op: 'test', path: '/metadata/uid', value: before.metadata?.uid },
        { op: 'test', path: '/metadata/ownerReferences', value: [OWNER] },
      ]);
      const mine = [`PodMachine/${pm.metadata.uid}`];
      const pod = h.cluster.server.get<V1Pod>(CoreTypes.Pod, 'ns', 'web');
      assert.equal(pod.metadata?.uid, before.metadata?.uid, 'the same pod');
      assert.deepEqual(ownerUids(pod), mine);
      assert.equal(pod.metadata?.labels?.['infra.basicoperator.dev/podmachine'], 'web');
      for (const name of ['web-data', 'web-logs']) {
        const claim = h.cluster.server.get<V1PersistentVolumeClaim>(
          CoreTypes.PersistentVolumeClaim,
          'ns',
          name,
        );
        assert.deepEqual(ownerUids(claim), mine);
      }
      const status = h.status.last('web');
      assert.equal(status?.phase, 'Running');
      assert.equal(status?.ready, true);
      assert.equal(status?.failureReason, undefined);
      assert.deepEqual(h.eventSummary(), [
        'Normal Reparented',
        'Normal Reparented',
        'Normal Reparented',
        'Normal Running',
      ]);
      assert.match(
        h.events.events[0]?.note ?? '',
        /Took over PersistentVolumeClaim web-data from Machine web/,
      );

      await h.cluster.sync();
      h.client.clearActions();
      await h.reconcile('web');
      assert.deepEqual(h.client.writes(), [], 'once re-parented, nothing more to do');
    });

    it('a claim the cache does not show yet is re-parented after the live read', async () => {
      const pm = podMachine(ONE_VOLUME, { owner: OWNER });
      const h = await setup(pm);
      h.cluster.seed(CoreTypes.PersistentVolumeClaim, {
        ...fromOldMachine(desiredClaim(pm, pm.spec.volumes![0]!)),
        status: { phase: 'Bound' },
      });
      await h.reconcile('web');
      assert.deepEqual(
        h.client.actions.map((a) => `${a.verb} ${a.kind} ${a.name}`),
        [
          'create PersistentVolumeClaim web-data',
          'get PersistentVolumeClaim web-data',
          'patch PersistentVolumeClaim web-data',
          'create Pod web',
        ],
      );
      assert.equal(h.status.last('web')?.failureReason, undefined);
    });

    it("another Machine's children stay foreign: PodConflict, nothing patched", async () => {
      const pm = podMachine({ volumes: [] }, { owner: OWNER });
      const h = await setup(pm, (c) =>
        c.seed(CoreTypes.Pod, {
          ...fromOldMachine(desiredPod(pm)),
          metadata: {
            ...fromOldMachine(desiredPod(pm)).metadata,
            ownerReferences: [{ ...OWNER, uid: 'another' }],
          },
        }),
      );
      await h.reconcile('web');
      assert.deepEqual(h.client.writes(), []);
      assert.equal(h.status.last('web')?.failureReason, 'PodConflict');
    });

    it('on a stop request: the pod is re-parented, then deleted; the claims are re-parented and kept', async () => {
      const pm = podMachine({}, { owner: OWNER, annotations: STOP });
      const h = await setup(pm, oldMachineChildren(pm));
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary(), [
        'patch Pod web',
        'delete Pod web',
        'patch PersistentVolumeClaim web-data',
        'patch PersistentVolumeClaim web-logs',
      ]);
      assert.equal(h.status.last('web')?.phase, 'Stopping');
    });
  });
});
