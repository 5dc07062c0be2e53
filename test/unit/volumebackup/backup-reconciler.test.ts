// reconcile() of the volumebackup controller against a fake API server and real informers filled
// from it: the backup claims and copy Jobs it creates, its retries and their pauses, when it gives up,
// its deadline, and the status and events it reports.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import {
  MACHINE,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  type Machine,
  SKIP_BACKUP_ANNOTATION,
  VOLUME_BACKUP,
  type VolumeBackup,
} from '../../../src/apis/index.ts';
import { VolumeBackupReconciler } from '../../../src/controllers/volumebackup/backup-reconciler.ts';
import { desiredBackupClaim, desiredCopyJob } from '../../../src/controllers/volumebackup/children.ts';
import { VOLUME_BACKUP_CONTROLLER } from '../../../src/controllers/volumebackup/index.ts';
import { exponentialRetry } from '../../../src/controllers/volumebackup/progress.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { eventsFor } from '../../../src/runtime/events/index.ts';
import { findCondition } from '../../../src/runtime/write/conditions.ts';
import { controllerReference } from '../../../src/runtime/write/owner-refs.ts';
import { FakeCluster } from '../../support/fake/cluster.ts';
import { type Harness, harness } from '../../support/fake/harness.ts';
import { backup, machine } from './fixtures.ts';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const IMAGE = 'busybox:1.36';
const NAME = 'web-0b7c9a52';

/** The Machine's claims, bound, 2Gi provisioned for a 1Gi request. */
/** The claims of the Machine's volumes, as its provider made them (with the label the cache selects). */
function sourceClaims(m: Machine): V1PersistentVolumeClaim[] {
  return m.spec.volumes!.map((v) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: `${m.metadata.name}-${v.name}`,
      namespace: m.metadata.namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: String(v.size) } },
      ...(v.storageClassName !== undefined ? { storageClassName: v.storageClassName } : {}),
    },
    status: { phase: 'Bound', capacity: { storage: '2Gi' } },
  }));
}

const running = () => backup({ phase: 'Running', startTime: new Date(NOW - MINUTE).toISOString() });

/** Copy Job `attempt` of `volume`, as this controller made it, in the state `condition` says. */
function copyJob(
  volume: 'data' | 'logs',
  attempt: number,
  condition?: { type: 'Complete' | 'Failed'; at: number },
): V1Job {
  const job = desiredCopyJob(backup(), volume, `web-${volume}`, attempt, IMAGE, 3600);
  if (!condition) return job;
  const lastTransitionTime = new Date(condition.at).toISOString() as unknown as Date;
  const failure =
    condition.type === 'Failed'
      ? { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }
      : {};
  return {
    ...job,
    status: { conditions: [{ type: condition.type, status: 'True', lastTransitionTime, ...failure }] },
  };
}

const backupClaims = () =>
  (['data', 'logs'] as const).map((v) => desiredBackupClaim(backup(), v, sourceClaims(machine())[0]!));

async function setup(b: VolumeBackup, ...seed: Array<(cluster: FakeCluster) => void>) {
  const cluster = new FakeCluster();
  cluster.seed(VOLUME_BACKUP, b);
  cluster.seed(MACHINE, machine());
  cluster.seed(CoreTypes.PersistentVolumeClaim, ...sourceClaims(machine()));
  for (const s of seed) s(cluster);
  return harness<VolumeBackup>(
    cluster,
    async (c, events) =>
      new VolumeBackupReconciler({
        client: c.kubeClient,
        backups: await c.informer(VOLUME_BACKUP),
        machines: await c.informer(MACHINE),
        claims: await c.informer(CoreTypes.PersistentVolumeClaim),
        jobs: await c.informer(CoreTypes.Job),
        pods: await c.informer(CoreTypes.Pod),
        events: eventsFor(events, VOLUME_BACKUP_CONTROLLER, VOLUME_BACKUP),
        copyImage: IMAGE,
        retry: exponentialRetry(3, 10_000),
        deadlineMs: HOUR,
      }),
  );
}

/** The fields of an events.k8s.io/v1 Event the controller reads. */
interface JobEvent extends KubeObject {
  regarding: { kind: string; name: string };
  reason: string;
  note: string;
  eventTime: string;
}

const ready = (h: Harness<VolumeBackup>) => findCondition(h.status.last(NAME)?.conditions, 'Ready');

describe('VolumeBackupReconciler', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: NOW }));
  afterEach(() => mock.timers.reset());

  it('creates a backup claim per volume, as big as its source, and a copy Job into it; Running', async () => {
    const h = await setup(backup());
    assert.deepEqual(
      await h.reconcile(NAME),
      { requeueAfterMs: HOUR },
      'looks again at the deadline at the latest',
    );
    assert.deepEqual(h.client.writeSummary(), [
      `create PersistentVolumeClaim ${NAME}-data`,
      `create Job ${NAME}-data-1`,
      `create PersistentVolumeClaim ${NAME}-logs`,
      `create Job ${NAME}-logs-1`,
    ]);
    const [claim, job] = h.client.writes();
    assert.deepEqual(claim?.body, backupClaims()[0]);
    const sized = claim?.body as V1PersistentVolumeClaim | undefined;
    assert.equal(
      sized?.spec?.resources?.requests?.storage,
      '2Gi',
      'the capacity of the source, not its request',
    );
    assert.deepEqual(job?.body, desiredCopyJob(backup(), 'data', 'web-data', 1, IMAGE, 3630));
    assert.deepEqual(h.eventSummary(), [
      'Normal ClaimCreated',
      'Normal CopyStarted',
      'Normal ClaimCreated',
      'Normal CopyStarted',
      'Normal BackupStarted',
    ]);
    const status = h.status.last(NAME);
    assert.equal(status?.phase, 'Running');
    assert.equal(status?.startTime, '2026-01-01T12:00:00Z');
    assert.equal(status?.attempts, 2);
    assert.equal(ready(h)?.reason, 'BackupInProgress');
  });

  it('a source claim that reports no capacity yet: the backup claim asks for its request, of its class', async () => {
    const h = await setup(backup(), (c) => {
      const [claim] = c.server.list(CoreTypes.PersistentVolumeClaim);
      c.server.delete(CoreTypes.PersistentVolumeClaim, 'ns', 'web-data');
      c.seed(CoreTypes.PersistentVolumeClaim, {
        ...claim!,
        spec: { ...claim!.spec, resources: { requests: { storage: '3Gi' } }, storageClassName: 'fast' },
        status: { phase: 'Bound' },
      });
    });
    await h.reconcile(NAME);
    const claim = h.client.writes({ kind: 'PersistentVolumeClaim' })[0]?.body as V1PersistentVolumeClaim;
    assert.equal(claim.spec?.resources?.requests?.storage, '3Gi');
    assert.equal(claim.spec?.storageClassName, 'fast');
  });

  it('retries a failed copy after its pause (requeued for it), with a CopyRetried Warning', async () => {
    const h = await setup(running(), (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims());
      c.seed(
        CoreTypes.Job,
        copyJob('data', 1, { type: 'Failed', at: NOW - 2000 }),
        copyJob('logs', 1, { type: 'Complete', at: NOW }),
      );
    });
    assert.deepEqual(await h.reconcile(NAME), { requeueAfterMs: 8000 });
    assert.deepEqual(h.client.writes(), []);
    assert.match(
      ready(h)?.message ?? '',
      /copy Job web-0b7c9a52-data-1 failed: BackoffLimitExceeded.*retrying in 8s/,
    );

    mock.timers.tick(8000);
    await h.reconcile(NAME);
    assert.deepEqual(h.client.writeSummary(), [`create Job ${NAME}-data-2`]);
    assert.deepEqual(h.eventSummary(), ['Warning CopyRetried']);
    assert.equal(h.status.last(NAME)?.attempts, 3);
  });

  it('a failed copy whose condition has no time: its pause counts from the Job completion time', async () => {
    const failed = copyJob('data', 1, { type: 'Failed', at: NOW });
    failed.status = {
      conditions: failed.status!.conditions!.map(({ lastTransitionTime: _, ...c }) => c),
      completionTime: new Date(NOW - 2000).toISOString() as unknown as Date,
    };
    const h = await setup(running(), (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims());
      c.seed(CoreTypes.Job, failed, copyJob('logs', 1, { type: 'Complete', at: NOW }));
    });
    assert.deepEqual(await h.reconcile(NAME), { requeueAfterMs: 8000 });
  });

  it('gives up after the last attempt: Failed with the last failure and a Warning, no requeue', async () => {
    const failed = (n: number) => copyJob('data', n, { type: 'Failed', at: NOW - MINUTE });
    const h = await setup(running(), (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims());
      c.seed(
        CoreTypes.Job,
        failed(1),
        failed(2),
        failed(3),
        copyJob('logs', 1, { type: 'Complete', at: NOW }),
      );
    });
    assert.equal(await h.reconcile(NAME), undefined);
    assert.deepEqual(h.client.writes({ verb: 'create' }), []);
    assert.equal(h.status.last(NAME)?.phase, 'Failed');
    assert.equal(ready(h)?.reason, 'BackupFailed');
    assert.match(
      ready(h)?.message ?? '',
      /volume data: 3 of 3 copy attempts failed; last: copy Job web-0b7c9a52-data-3 failed: BackoffLimitExceeded: Job has reached the specified backoff limit/,
    );
    assert.deepEqual(h.eventSummary(), ['Warning BackupFailed']);
  });

  it('all copied: Completed, and the pods of the finished Jobs deleted (they hold the claims)', async () => {
    const h = await setup(running(), (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims());
      const [data] = c.seed(
        CoreTypes.Job,
        copyJob('data', 1, { type: 'Complete', at: NOW }),
        copyJob('logs', 1, { type: 'Complete', at: NOW }),
      );
      const pod: V1Pod = {
        metadata: {
          name: `${NAME}-data-1-abcde`,
          namespace: 'ns',
          labels: { 'app.kubernetes.io/managed-by': 'basic-operator' },
          ownerReferences: [controllerReference(data!, CoreTypes.Job)],
        },
      };
      c.seed(CoreTypes.Pod, pod);
    });
    assert.equal(await h.reconcile(NAME), undefined);
    assert.deepEqual(h.client.writeSummary(), [`delete Pod ${NAME}-data-1-abcde`]);
    assert.equal(h.status.last(NAME)?.phase, 'Completed');
    assert.equal(h.status.last(NAME)?.completionTime, '2026-01-01T12:00:00Z');
    assert.deepEqual(h.eventSummary(), ['Normal BackupCompleted']);
  });

  it('past its deadline: Failed with DeadlineExceeded, saying why a copy never ran (its FailedCreate Event)', async () => {
    const late = backup({ phase: 'Running', startTime: new Date(NOW - HOUR - MINUTE).toISOString() });
    const h = await setup(late, (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims());
      c.seed(CoreTypes.Job, copyJob('data', 1), copyJob('logs', 1, { type: 'Complete', at: NOW - HOUR }));
      const event: JobEvent = {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: `${NAME}-data-1.1`, namespace: 'ns' },
        regarding: { kind: 'Job', name: `${NAME}-data-1` },
        reason: 'FailedCreate',
        note: `Error creating: pods "${NAME}-data-1-x" is forbidden: exceeded quota: no-pods`,
        eventTime: new Date(NOW - HOUR).toISOString(),
      };
      c.seed(CoreTypes.Event, event);
    });
    assert.equal(await h.reconcile(NAME), undefined);
    assert.deepEqual(h.client.writes(), [], 'nothing more is started');
    assert.equal(h.status.last(NAME)?.phase, 'Failed');
    assert.equal(ready(h)?.reason, 'DeadlineExceeded');
    assert.match(
      ready(h)?.message ?? '',
      /not completed within the deadline of 1h .*volume data: copy Job web-0b7c9a52-data-1 could not create its pod: .*forbidden: exceeded quota/,
    );
    assert.deepEqual(h.eventSummary(), ['Warning DeadlineExceeded']);
  });

  describe('past its deadline with a copy Job still running', () => {
    const late = () => backup({ phase: 'Running', startTime: new Date(NOW - HOUR - MINUTE).toISOString() });
    const copying =
      (job: V1Job = copyJob('data', 1)) =>
      (c: FakeCluster) => {
        c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims());
        c.seed(CoreTypes.Job, job, copyJob('logs', 1, { type: 'Complete', at: NOW - HOUR }));
      };
    const container = { name: 'copy', image: IMAGE, imageID: '', ready: false, restartCount: 0 };
    const pods: { what: string; status: V1Pod['status']; says: RegExp }[] = [
      {
        what: 'not scheduled',
        status: {
          phase: 'Pending',
          conditions: [
            {
              type: 'PodScheduled',
              status: 'False',
              reason: 'Unschedulable',
              message: '0/4 nodes are available: 4 Insufficient cpu.',
            },
          ],
        },
        says: /copy pod web-0b7c9a52-data-1-abcde is Pending, not scheduled: 0\/4 nodes are available/,
      },
      {
        what: 'not scheduled, no message',
        status: {
          phase: 'Pending',
          conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
        },
        says: /copy pod web-0b7c9a52-data-1-abcde is Pending, not scheduled: Unschedulable/,
      },
      {
        what: 'its container waiting',
        status: {
          phase: 'Pending',
          conditions: [{ type: 'PodScheduled', status: 'True' }],
          containerStatuses: [
            {
              ...container,
              state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "busybox"' } },
            },
          ],
        },
        says: /copy pod web-0b7c9a52-data-1-abcde is Pending: ImagePullBackOff: Back-off pulling image "busybox"/,
      },
    ];
    for (const p of pods) {
      it(`its pod ${p.what}: DeadlineExceeded says where the pod is stuck`, async () => {
        const h = await setup(late(), (c) => {
          copying()(c);
          const [job] = c.server.list(CoreTypes.Job).filter((j) => j.metadata?.name === `${NAME}-data-1`);
          c.seed(CoreTypes.Pod, {
            metadata: {
              name: `${NAME}-data-1-abcde`,
              namespace: 'ns',
              labels: { 'app.kubernetes.io/managed-by': 'basic-operator' },
              ownerReferences: [controllerReference(job!, CoreTypes.Job)],
            },
            status: p.status,
          });
        });
        assert.equal(await h.reconcile(NAME), undefined);
        assert.equal(ready(h)?.reason, 'DeadlineExceeded');
        assert.match(ready(h)?.message ?? '', p.says);
      });
    }

    for (const had of ['active', 'ready', 'succeeded', 'failed'] as const) {
      it(`a Job that had a pod (${had}), gone now: says so, without looking for why none was created`, async () => {
        const job = copyJob('data', 1);
        job.status = { [had]: 1 };
        const h = await setup(late(), copying(job));
        assert.equal(await h.reconcile(NAME), undefined);
        assert.match(
          ready(h)?.message ?? '',
          /copy Job web-0b7c9a52-data-1 has no pod \(see kubectl describe job/,
        );
        assert.deepEqual(
          h.client.actions.filter((a) => a.kind === 'Event'),
          [],
          'its FailedCreate Events are not read',
        );
      });
    }
  });

  describe('names taken and refusals', () => {
    it('never copies into a claim of the backup claim name that is not its own', async () => {
      const theirs: V1PersistentVolumeClaim = {
        metadata: { name: `${NAME}-data`, namespace: 'ns' },
        spec: {},
      };
      const h = await setup(backup(), (c) => c.seed(CoreTypes.PersistentVolumeClaim, theirs));
      await h.reconcile(NAME);
      assert.equal(h.status.last(NAME)?.phase, 'Failed');
      assert.equal(ready(h)?.reason, 'BackupFailed');
      assert.match(
        ready(h)?.message ?? '',
        /claim web-0b7c9a52-data exists and is not owned by this VolumeBackup/,
      );
      assert.ok(!h.client.writeSummary().includes(`create Job ${NAME}-data-1`), 'no copy Job writes into it');
    });

    it('says so when a Job of the copy Job name is not its own', async () => {
      const theirs: V1Job = { metadata: { name: `${NAME}-data-1`, namespace: 'ns' }, spec: { template: {} } };
      const h = await setup(backup(), (c) => c.seed(CoreTypes.Job, theirs));
      await h.reconcile(NAME);
      assert.equal(h.status.last(NAME)?.phase, 'Failed');
      assert.match(
        ready(h)?.message ?? '',
        /Job web-0b7c9a52-data-1 exists and is not owned by this VolumeBackup/,
      );
    });

    it('a backup claim the API server refuses fails the backup at once, with the refusal', async () => {
      const h = await setup(backup());
      h.client.fail(
        { verb: 'create', kind: 'PersistentVolumeClaim' },
        new ApiError(
          403,
          'Forbidden',
          `persistentvolumeclaims "${NAME}-data" is forbidden: exceeded quota: no-storage`,
        ),
      );
      assert.equal(await h.reconcile(NAME), undefined);
      assert.equal(h.status.last(NAME)?.phase, 'Failed');
      assert.match(
        ready(h)?.message ?? '',
        /backup claim web-0b7c9a52-data refused: .*forbidden: exceeded quota/,
      );
      assert.deepEqual(h.eventSummary(), ['Warning BackupFailed']);
    });

    it('a source claim being deleted: fails at once, saying so', async () => {
      const h = await setup(backup(), (c) => {
        const [claim] = c.server.list(CoreTypes.PersistentVolumeClaim);
        c.server.delete(CoreTypes.PersistentVolumeClaim, 'ns', 'web-data');
        c.seed(CoreTypes.PersistentVolumeClaim, {
          ...claim!,
          metadata: { ...claim!.metadata, finalizers: ['kubernetes.io/pvc-protection'] },
        });
        c.server.delete(CoreTypes.PersistentVolumeClaim, 'ns', 'web-data');
      });
      await h.reconcile(NAME);
      assert.equal(h.status.last(NAME)?.phase, 'Failed');
      assert.match(ready(h)?.message ?? '', /source claim web-data is being deleted; .*foreground/);
    });

    it('a source claim already gone (a foreground deletion): fails at once, saying so', async () => {
      const h = await setup(backup());
      h.cluster.server.delete(CoreTypes.PersistentVolumeClaim, 'ns', 'web-data');
      await h.cluster.sync();
      await h.reconcile(NAME);
      assert.equal(h.status.last(NAME)?.phase, 'Failed');
      assert.match(ready(h)?.message ?? '', /source claim web-data not found; .*foreground/);
    });
  });

  it('the Machine let go with the skip annotation: the backup records the skip and stops', async () => {
    const skipping = machine(
      {},
      {
        finalizers: ['example.com/hold'],
        deletionTimestamp: new Date(NOW),
        annotations: { [SKIP_BACKUP_ANNOTATION]: 'true' },
      },
    );
    const h = await setup(running(), (c) => {
      c.server.delete(MACHINE, 'ns', 'web');
      c.seed(MACHINE, skipping);
    });
    assert.equal(await h.reconcile(NAME), undefined);
    assert.deepEqual(h.client.writes(), []);
    assert.equal(h.status.last(NAME)?.phase, 'Failed');
    assert.equal(findCondition(h.status.last(NAME)?.conditions, 'Skipped')?.status, 'True');
    assert.equal(ready(h)?.reason, 'BackupSkipped');
  });
});

describe('a backup that failed before the controller set Stalled', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: NOW }));
  afterEach(() => mock.timers.reset());

  const failedEarlier = () =>
    backup({
      phase: 'Failed',
      startTime: new Date(NOW - HOUR).toISOString(),
      completionTime: new Date(NOW - MINUTE).toISOString(),
      attempts: 3,
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'BackupFailed',
          message: 'volume data: 3 of 3 copy attempts failed',
          lastTransitionTime: '2026-01-01T11:59:00Z',
        },
      ],
    });

  it('gets Stalled from its Ready condition once, and nothing else changes', async () => {
    const h = await setup(failedEarlier());
    assert.equal(await h.reconcile(NAME), undefined);
    const status = h.status.last(NAME);
    assert.equal(status?.phase, 'Failed');
    assert.equal(status?.attempts, 3);
    assert.deepEqual(findCondition(status?.conditions, 'Stalled'), {
      type: 'Stalled',
      status: 'True',
      reason: 'BackupFailed',
      message: 'volume data: 3 of 3 copy attempts failed',
      observedGeneration: 1,
      lastTransitionTime: '2026-01-01T12:00:00Z',
    });
    assert.ok(!h.client.writeSummary().some((w) => w.startsWith('create')), 'starts no copy');
    assert.deepEqual(h.eventSummary(), []);
  });

  it('a Failed backup that has Stalled is left alone', async () => {
    const h = await setup(failedEarlier());
    await h.reconcile(NAME);
    assert.equal(h.status.written.length, 1);
    const again = await setup({ ...failedEarlier(), status: h.status.last(NAME) });
    await again.reconcile(NAME);
    assert.equal(again.status.written.length, 0);
  });
});
