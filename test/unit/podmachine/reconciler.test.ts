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
} from '../../../src/apis/index.ts';
import { desiredClaim, desiredPod, desiredRestoreJob } from '../../../src/controllers/podmachine/children.ts';
import { CONTROLLER_NAME } from '../../../src/controllers/podmachine/index.ts';
import { RESTORED_FROM_ANNOTATION } from '../../../src/controllers/podmachine/names.ts';
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
    async (c, events) =>
      new PodMachineReconciler({
        client: c.kubeClient,
        podMachines: await c.informer(POD_MACHINE),
        pods: await c.informer(CoreTypes.Pod),
        claims: await c.informer(CoreTypes.PersistentVolumeClaim),
        jobs: await c.informer(CoreTypes.Job),
        backups: await c.informer(VOLUME_BACKUP),
        events: eventsFor(events, CONTROLLER_NAME, POD_MACHINE),
        copyImage: 'busybox:1.36',
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
      h.cluster.seed(
        CoreTypes.Job,
        desiredRestoreJob(pm, pm.spec.volumes![0]!, 'old-data', 'busybox:1.36', 3600),
      );
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
      status: { phase: 'Completed', volumes: [{ name: 'data', backupClaimName: 'old-data-backup' }] },
    };

    it('creates the claim and the restore Job, and no pod until the restore is done', async () => {
      const pm = podMachine(RESTORING);
      const h = await setup(pm, (c) => c.seed(VOLUME_BACKUP, completed));
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writeSummary(), [
        'create PersistentVolumeClaim web-data',
        'create Job web-data-restore',
      ]);
      assert.deepEqual(
        h.client.writes({ kind: 'Job' })[0]?.body,
        desiredRestoreJob(pm, pm.spec.volumes![0]!, 'old-data-backup', 'busybox:1.36', 3600),
      );
      assert.deepEqual(h.eventSummary(), ['Normal ClaimCreated', 'Normal RestoreStarted']);
      assert.equal(h.status.last('web')?.providerID, undefined, 'no pod yet');
    });

    it('once the Job succeeded: marks the claim restored, releases the Job pod, and creates the pod', async () => {
      const pm = podMachine(RESTORING);
      const job: V1Job = {
        ...desiredRestoreJob(pm, pm.spec.volumes![0]!, 'old-data-backup', 'busybox:1.36', 3600),
        status: { conditions: [{ type: 'Complete', status: 'True' }] },
      };
      const h = await setup(pm, (c) => {
        c.seed(VOLUME_BACKUP, completed);
        c.seed(CoreTypes.PersistentVolumeClaim, desiredClaim(pm, pm.spec.volumes![0]!));
        const [seeded] = c.seed(CoreTypes.Job, job);
        const copyPod = desiredPod(pm);
        copyPod.metadata = {
          ...copyPod.metadata,
          name: 'web-data-restore-x1',
          ownerReferences: [controllerReference(seeded!, CoreTypes.Job)],
        };
        c.seed(CoreTypes.Pod, copyPod);
      });
      await h.reconcile('web');
      assert.deepEqual(h.client.writeSummary(), [
        'delete Pod web-data-restore-x1',
        'patch PersistentVolumeClaim web-data',
        'create Pod web',
      ]);
      assert.deepEqual(h.client.writes({ verb: 'patch' })[0]?.body, {
        metadata: { annotations: { [RESTORED_FROM_ANNOTATION]: 'old/data' } },
      });
      assert.deepEqual(h.eventSummary(), ['Normal RestoreCompleted', 'Normal PodCreated']);
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

    it('a failed restore Job: terminal, RestoreFailed as failureReason, no pod', async () => {
      const pm = podMachine(RESTORING);
      const h = await setup(pm, (c) => {
        c.seed(VOLUME_BACKUP, completed);
        c.seed(CoreTypes.PersistentVolumeClaim, {
          ...desiredClaim(pm, pm.spec.volumes![0]!),
          status: { phase: 'Bound' },
        });
        c.seed(CoreTypes.Job, {
          ...desiredRestoreJob(pm, pm.spec.volumes![0]!, 'old-data-backup', 'busybox:1.36', 3600),
          status: { conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded' }] },
        });
      });
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writes(), []);
      const status = h.status.last('web');
      assert.equal(status?.phase, 'Failed');
      assert.equal(status?.failureReason, 'RestoreFailed');
      assert.match(
        status?.failureMessage ?? '',
        /restore Job web-data-restore failed \(DeadlineExceeded\); delete the Job/,
      );
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
