// reconcile() of the Machine controller against a fake API server and real informers filled from it
// (with the operator's cache selections: only objects with our managed-by label are cached): the
// claims, pod and restore Jobs it creates, what it deletes on deletion, its status, requeues and events.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import {
  MACHINE,
  type Machine,
  VOLUME_BACKUP,
  VOLUME_BACKUP_FINALIZER,
  type VolumeBackup,
} from '../../../src/apis/index.ts';
import { desiredClaim, desiredPod, desiredRestoreJob } from '../../../src/controllers/machine/children.ts';
import { CONTROLLER_NAME } from '../../../src/controllers/machine/index.ts';
import { RESTORED_FROM_ANNOTATION } from '../../../src/controllers/machine/names.ts';
import { MachineReconciler } from '../../../src/controllers/machine/reconciler.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { eventsFor } from '../../../src/runtime/events/index.ts';
import { findCondition } from '../../../src/runtime/write/conditions.ts';
import { controllerReference } from '../../../src/runtime/write/owner-refs.ts';
import { FakeCluster } from '../../support/fake/cluster.ts';
import { type Harness, harness } from '../../support/fake/harness.ts';
import { machine } from './fixtures.ts';

const NOW = new Date('2026-01-01T12:00:00Z');
const NO_BACKUP = { backup: { policy: 'None' as const } };
const ONE_VOLUME = { volumes: [{ name: 'data', size: '1Gi', mountPath: '/data' }] };
const RESTORING = {
  volumes: [
    { name: 'data', size: '1Gi', mountPath: '/data', restoreFrom: { volumeBackup: 'old', volume: 'data' } },
  ],
};

async function setup(m: Machine, ...seed: Array<(cluster: FakeCluster) => void>) {
  const cluster = new FakeCluster({ now: () => NOW });
  cluster.seed(MACHINE, m);
  for (const s of seed) s(cluster);
  return harness<Machine>(
    cluster,
    async (c, events) =>
      new MachineReconciler({
        client: c.kubeClient,
        machines: await c.informer(MACHINE),
        pods: await c.informer(CoreTypes.Pod),
        claims: await c.informer(CoreTypes.PersistentVolumeClaim),
        jobs: await c.informer(CoreTypes.Job),
        backups: await c.informer(VOLUME_BACKUP),
        events: eventsFor(events, CONTROLLER_NAME, MACHINE),
        copyImage: 'busybox:1.36',
        restoreDeadlineSeconds: 3600,
        now: () => NOW,
      }),
  );
}

/** A Machine being deleted, held by `finalizer`. */
function deleting(m: Machine, finalizer = VOLUME_BACKUP_FINALIZER): Machine {
  return { ...m, metadata: { ...m.metadata, finalizers: [finalizer], deletionTimestamp: NOW } };
}

const condition = (h: Harness<Machine>, type: string) =>
  findCondition(h.status.last('web')?.conditions, type);

const quota = (what: string) =>
  new ApiError(
    403,
    'Forbidden',
    `${what} is forbidden: exceeded quota: q, requested: ${what}=1, used: 0, limited: 0`,
  );

/** A foreign object of this name, without our label: the cache never shows it. */
const foreign = <T extends V1Pod | V1PersistentVolumeClaim>(obj: T): T => ({
  ...obj,
  metadata: { name: obj.metadata?.name, namespace: 'ns' },
});

describe('MachineReconciler', () => {
  it('backup policy None: creates the claims, then the pod, at once', async () => {
    const m = machine(NO_BACKUP);
    const h = await setup(m);
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), [
      'create PersistentVolumeClaim web-data',
      'create PersistentVolumeClaim web-logs',
      'create Pod web',
    ]);
    assert.deepEqual(
      h.client.writes().map((a) => a.body),
      [desiredClaim(m, m.spec.volumes![0]!), desiredClaim(m, m.spec.volumes![1]!), desiredPod(m)],
    );
    assert.deepEqual(h.eventSummary(), ['Normal ClaimCreated', 'Normal ClaimCreated', 'Normal PodCreated']);
    assert.equal(h.status.last('web')?.phase, 'Pending', 'the claims are not bound yet');
    assert.equal(condition(h, 'VolumesReady')?.reason, 'ClaimsPending');
  });

  it('claims bound and the pod running and ready: Running, Ready, a Normal Running event, no writes', async () => {
    const m = machine(NO_BACKUP);
    const h = await setup(m, (c) => {
      for (const v of m.spec.volumes!)
        c.seed(CoreTypes.PersistentVolumeClaim, { ...desiredClaim(m, v), status: { phase: 'Bound' } });
      c.seed(CoreTypes.Pod, {
        ...desiredPod(m),
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      });
    });
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writes(), []);
    assert.equal(h.status.last('web')?.phase, 'Running');
    assert.equal(h.status.last('web')?.ready, true);
    assert.equal(condition(h, 'Ready')?.reason, 'PodReady');
    assert.deepEqual(h.eventSummary(), ['Normal Running']);
  });

  // Another container's status comes first: the Machine's own is found by name.
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
    it(`a pod that failed (${f.what}): Failed, saying why, a Warning, and the pod kept`, async () => {
      const m = machine(NO_BACKUP);
      const h = await setup(m, (c) => {
        for (const v of m.spec.volumes!)
          c.seed(CoreTypes.PersistentVolumeClaim, { ...desiredClaim(m, v), status: { phase: 'Bound' } });
        c.seed(CoreTypes.Pod, { ...desiredPod(m), status: f.status });
      });
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writes(), [], 'the failed pod stays for a person to look at');
      assert.equal(h.status.last('web')?.phase, 'Failed');
      assert.equal(condition(h, 'Ready')?.reason, 'PodFailed');
      assert.match(condition(h, 'Ready')?.message ?? '', f.message);
      assert.deepEqual(h.eventSummary(), ['Warning PodFailed']);
    });
  }

  it('backup policy OnDelete: creates nothing until the finalizer is there, and needs no requeue meanwhile', async () => {
    const h = await setup(machine());
    assert.equal(
      await h.reconcile('web'),
      undefined,
      'the finalizer arriving is a Machine update: no requeue',
    );
    assert.deepEqual(h.client.writes(), []);
    assert.equal(h.status.last('web')?.phase, 'Pending');
    assert.equal(condition(h, 'Ready')?.status, 'False');
    assert.equal(condition(h, 'Ready')?.reason, 'WaitingForBackupFinalizer');
    assert.match(condition(h, 'Ready')?.message ?? '', /infra\.basicoperator\.dev\/volume-backup/);
    const waiting = h.status.last('web');
    await h.reconcile('web');
    assert.deepEqual(h.status.last('web'), waiting, 'the same status again: nothing for the writer to send');

    h.cluster.server.patch(MACHINE, {
      namespace: 'ns',
      name: 'web',
      patchType: 'merge',
      body: { metadata: { finalizers: [VOLUME_BACKUP_FINALIZER] } },
    });
    await h.cluster.sync();
    await h.reconcile('web');
    assert.deepEqual(h.client.writeSummary(), [
      'create PersistentVolumeClaim web-data',
      'create PersistentVolumeClaim web-logs',
      'create Pod web',
    ]);
  });

  it('a pod the API server refuses: PodRefused, Failed, a Warning, a requeue with backoff; then the retry creates it', async () => {
    const h = await setup(machine(NO_BACKUP));
    h.client.fail({ verb: 'create', kind: 'Pod' }, quota('pods'), { times: 1 });
    assert.deepEqual(await h.reconcile('web'), { requeue: true });
    assert.equal(h.status.last('web')?.phase, 'Failed');
    assert.equal(condition(h, 'Ready')?.reason, 'PodRefused');
    assert.match(condition(h, 'Ready')?.message ?? '', /forbidden.*quota/);
    assert.deepEqual(h.eventSummary().at(-1), 'Warning PodRefused');

    await h.cluster.sync();
    h.client.clearActions();
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['create Pod web']);
    assert.equal(h.status.last('web')?.phase, 'Pending', 'no longer Failed: the claims are still pending');
  });

  it('a claim the API server refuses: ClaimRefused, and no pod without it', async () => {
    const h = await setup(machine(NO_BACKUP));
    h.client.fail(
      { verb: 'create', kind: 'PersistentVolumeClaim', name: 'web-data' },
      quota('persistentvolumeclaims'),
    );
    assert.deepEqual(await h.reconcile('web'), { requeue: true });
    assert.deepEqual(h.client.writeSummary({ verb: 'create', kind: 'Pod' }), []);
    assert.equal(condition(h, 'VolumesReady')?.reason, 'ClaimRefused');
    assert.match(condition(h, 'Ready')?.message ?? '', /refused claim web-data: .*forbidden.*quota/);
  });

  it('a foreign claim of its claim name (invisible to the cache): ClaimConflict after a live read, no pod', async () => {
    const m = machine({ ...NO_BACKUP, ...ONE_VOLUME });
    const h = await setup(m, (c) =>
      c.seed(CoreTypes.PersistentVolumeClaim, foreign(desiredClaim(m, m.spec.volumes![0]!))),
    );
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(
      h.client.actions.map((a) => `${a.verb} ${a.kind} ${a.name} ${a.error?.reason ?? ''}`.trim()),
      ['create PersistentVolumeClaim web-data AlreadyExists', 'get PersistentVolumeClaim web-data'],
    );
    assert.equal(h.status.last('web')?.phase, 'Failed');
    assert.equal(condition(h, 'VolumesReady')?.reason, 'ClaimConflict');
    assert.match(condition(h, 'Ready')?.message ?? '', /claim web-data exists and is not controlled/);
  });

  it('a foreign pod of its name (invisible to the cache): PodConflict after a live read', async () => {
    const m = machine({ ...NO_BACKUP, volumes: [] });
    const h = await setup(m, (c) => c.seed(CoreTypes.Pod, foreign(desiredPod(m))));
    await h.reconcile('web');
    assert.deepEqual(
      h.client.actions.map((a) => `${a.verb} ${a.kind} ${a.name}`),
      ['create Pod web', 'get Pod web'],
    );
    assert.equal(h.status.last('web')?.phase, 'Failed');
    assert.equal(condition(h, 'Ready')?.reason, 'PodConflict');
    assert.match(condition(h, 'Ready')?.message ?? '', /pod web exists and is not controlled/);
  });

  it('on deletion: deletes the pod (by uid), keeps the claims, reports Stopping, then Stopped', async () => {
    const m = deleting(machine());
    const h = await setup(m, (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, ...m.spec.volumes!.map((v) => desiredClaim(m, v)));
      c.seed(CoreTypes.Pod, desiredPod(m));
    });
    const pod = h.cluster.server.get(CoreTypes.Pod, 'ns', 'web');
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['delete Pod web']);
    assert.deepEqual(h.client.writes()[0]?.body, {
      propagationPolicy: 'Background',
      preconditions: { uid: pod.metadata?.uid },
    });
    assert.equal(h.status.last('web')?.phase, 'Stopping');
    assert.deepEqual(h.eventSummary(), ['Normal Stopping']);

    await h.cluster.sync();
    h.client.clearActions();
    await h.reconcile('web');
    assert.deepEqual(h.client.writes(), [], 'the claims stay');
    assert.equal(h.status.last('web')?.phase, 'Stopped');
    assert.equal(condition(h, 'Ready')?.reason, 'Stopped');
    assert.deepEqual(h.eventSummary(), ['Normal Stopping', 'Normal Stopped']);
  });

  it('on deletion, a restore Job the cache does not show yet is read live: Stopping, and the Job deleted in the foreground', async () => {
    const m = deleting(
      { ...machine(RESTORING), spec: { ...machine(RESTORING).spec, ...NO_BACKUP } },
      'example.com/hold',
    );
    const h = await setup(m);
    const job = desiredRestoreJob(m, m.spec.volumes![0]!, 'old-data', 'busybox:1.36', 3600);
    h.cluster.seed(CoreTypes.Job, job); // after the caches were filled: they do not show it
    await h.reconcile('web');
    assert.equal(h.status.last('web')?.phase, 'Stopping', 'a restore Job still runs: not Stopped');
    const deleted = h.client.writes({ verb: 'delete', kind: 'Job' });
    assert.deepEqual(
      deleted.map((a) => [a.name, (a.body as { propagationPolicy?: string }).propagationPolicy]),
      [['web-data-restore', 'Foreground']],
    );
    const left = h.cluster.server.get(CoreTypes.Job, 'ns', 'web-data-restore');
    assert.ok(left.metadata?.deletionTimestamp, 'the Job is being deleted, its pods first');
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
      const m = machine({ ...NO_BACKUP, ...RESTORING });
      const h = await setup(m, (c) => c.seed(VOLUME_BACKUP, completed));
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writeSummary(), [
        'create PersistentVolumeClaim web-data',
        'create Job web-data-restore',
      ]);
      assert.deepEqual(
        h.client.writes({ kind: 'Job' })[0]?.body,
        desiredRestoreJob(m, m.spec.volumes![0]!, 'old-data-backup', 'busybox:1.36', 3600),
      );
      assert.deepEqual(h.eventSummary(), ['Normal ClaimCreated', 'Normal RestoreStarted']);
    });

    it('once the Job succeeded: marks the claim restored, releases the Job pod, and creates the pod', async () => {
      const m = machine({ ...NO_BACKUP, ...RESTORING });
      const job: V1Job = {
        ...desiredRestoreJob(m, m.spec.volumes![0]!, 'old-data-backup', 'busybox:1.36', 3600),
        status: { conditions: [{ type: 'Complete', status: 'True' }] },
      };
      const h = await setup(m, (c) => {
        c.seed(VOLUME_BACKUP, completed);
        c.seed(CoreTypes.PersistentVolumeClaim, desiredClaim(m, m.spec.volumes![0]!));
        const [seeded] = c.seed(CoreTypes.Job, job);
        const copyPod = desiredPod(m);
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
      const m = machine({ ...NO_BACKUP, ...RESTORING });
      const claim = desiredClaim(m, m.spec.volumes![0]!);
      claim.metadata = { ...claim.metadata, annotations: { [RESTORED_FROM_ANNOTATION]: 'old/data' } };
      const h = await setup(m, (c) =>
        c.seed(CoreTypes.PersistentVolumeClaim, { ...claim, status: { phase: 'Bound' } }),
      );
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writeSummary(), ['create Pod web']);
      assert.equal(condition(h, 'VolumesReady')?.reason, 'ClaimsBound');
    });

    it('a VolumeBackup that does not exist: Pending with BackupNotFound and a Warning, no pod', async () => {
      const m = machine({
        volumes: [{ ...RESTORING.volumes[0]!, restoreFrom: { volumeBackup: 'nowhere', volume: 'data' } }],
      });
      const h = await setup({ ...m, metadata: { ...m.metadata, finalizers: [VOLUME_BACKUP_FINALIZER] } });
      assert.equal(await h.reconcile('web'), undefined);
      assert.deepEqual(h.client.writeSummary(), ['create PersistentVolumeClaim web-data']);
      assert.equal(h.status.last('web')?.phase, 'Pending');
      assert.equal(h.status.last('web')?.ready, false);
      assert.equal(condition(h, 'VolumesReady')?.reason, 'BackupNotFound');
      assert.match(
        condition(h, 'VolumesReady')?.message ?? '',
        /volume data restores from VolumeBackup nowhere, which does not exist in this namespace/,
      );
      assert.equal(condition(h, 'Ready')?.status, 'False');
      assert.deepEqual(h.eventSummary(), ['Normal ClaimCreated', 'Warning BackupNotFound']);
    });
  });
});
