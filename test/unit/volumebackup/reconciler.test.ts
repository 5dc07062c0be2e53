// reconcile() of the volumebackup controller against a fake API server and real informers filled
// from it: the backup claims and copy Jobs it creates, its retries and their pauses, when it gives up,
// its deadline, and the status and events it reports.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import {
  type CopyPrivilege,
  MACHINE,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  type Machine,
  parseCopyReport,
  SKIP_BACKUP_ANNOTATION,
  VOLUME_BACKUP,
  VOLUME_COPY_USER,
  type VolumeBackup,
  type VolumeBackupStatus,
} from '../../../src/apis/index.ts';
import type { CachedClaim, CachedJob, CachedPod } from '../../../src/controllers/volumebackup/cached.ts';
import { CONTROLLER_NAME as VOLUME_BACKUP_CONTROLLER } from '../../../src/controllers/volumebackup/index.ts';
import { desiredBackupClaim, desiredCopyJob } from '../../../src/controllers/volumebackup/logic/children.ts';
import { exponentialRetry } from '../../../src/controllers/volumebackup/logic/progress.ts';
import {
  BACKUP_CLAIM_FINALIZER,
  COPY_FAILURE_ANNOTATION,
  COPY_REPORT_ANNOTATION,
} from '../../../src/controllers/volumebackup/names.ts';
import { VolumeBackupReconciler } from '../../../src/controllers/volumebackup/reconciler.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { eventsFor } from '../../../src/runtime/events/index.ts';
import { findCondition } from '../../../src/runtime/write/conditions.ts';
import { controllerReference } from '../../../src/runtime/write/owner-refs.ts';
import { FakeCluster } from '../../support/fake/cluster.ts';
import { type Harness, harness } from '../../support/fake/harness.ts';
import { restrictedViolations } from '../../support/pod-security.ts';
import { backup, copyReport, machine, manifest } from './fixtures.ts';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const IMAGE = 'busybox:1.36';
const NAME = 'web-0b7c9a52';

/** The claims of the Machine's volumes, as its provider made them (with the label the cache selects), bound, 2Gi provisioned for a 1Gi request. */
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

/** The Machine, as its controller reports it: each volume's claim in its status. */
function reporting(m: Machine = machine()): Machine {
  return {
    ...m,
    status: {
      phase: 'Running',
      volumes: m.spec.volumes!.map((v) => ({ name: v.name, claimName: `${m.metadata.name}-${v.name}` })),
    },
  };
}

/** What each volume's copy measures: distinct trees. */
const MANIFESTS = { data: manifest(1), logs: manifest(2) };
/** What a copy pod says when it fails (its termination message, or its last log lines). */
const POD_SAYS =
  'OwnerNotPreserved: /source/pgdata is owned by 999:999; copying as 65532 under Pod Security "restricted" cannot keep it';
const ROOT: CopyPrivilege = { mode: 'root' };
const NONROOT: CopyPrivilege = {
  mode: 'nonroot',
  uid: VOLUME_COPY_USER,
  gid: VOLUME_COPY_USER,
  level: 'restricted',
};
const POD_SECURITY_REFUSAL =
  'pods "web-0b7c9a52-probe-00001" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false), runAsUser=0 (pod must not set runAsUser=0), unrestricted capabilities (container "copy" must not include "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID" in securityContext.capabilities.add)';

/**
 * Copy Job `attempt` of `volume`, as this controller made it, in the state `condition` says. A
 * finished one carries its record, as an earlier reconcile wrote it (a Complete one its pod's verified
 * report, a Failed one the pod's words), unless `annotations` says otherwise (`{}`: not recorded yet).
 */
function copyJob(
  volume: 'data' | 'logs',
  attempt: number,
  condition?: { type: 'Complete' | 'Failed'; at: number },
  annotations?: Record<string, string>,
): V1Job {
  const job = desiredCopyJob(
    backup(),
    volume,
    { image: IMAGE, sourceClaim: `web-${volume}`, attempt, privilege: ROOT },
    3600,
  );
  if (!condition) return job;
  const lastTransitionTime = new Date(condition.at).toISOString() as unknown as Date;
  const failure =
    condition.type === 'Failed'
      ? { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }
      : {};
  const record =
    annotations ??
    (condition.type === 'Complete'
      ? { [COPY_REPORT_ANNOTATION]: copyReport(MANIFESTS[volume]) }
      : { [COPY_FAILURE_ANNOTATION]: POD_SAYS });
  return {
    ...job,
    metadata: { ...job.metadata, annotations: record },
    status: {
      conditions: [{ type: condition.type, status: 'True', lastTransitionTime, ...failure }],
      ...(condition.type === 'Complete' ? { completionTime: lastTransitionTime } : {}),
    },
  };
}

/** The pod of `job` (as stored), its copy container ended with `message` (exit 1 when `failed`), or still running. */
function copyPod(job: V1Job, end?: { message?: string; failed?: boolean }): V1Pod {
  return {
    metadata: {
      name: `${job.metadata?.name}-abcde`,
      namespace: 'ns',
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
      ownerReferences: [controllerReference(job, CoreTypes.Job)],
    },
    status: {
      phase: end ? (end.failed ? 'Failed' : 'Succeeded') : 'Running',
      containerStatuses: [
        {
          name: 'copy',
          image: IMAGE,
          imageID: '',
          ready: false,
          restartCount: 0,
          state: end
            ? {
                terminated: {
                  exitCode: end.failed ? 1 : 0,
                  ...(end.message !== undefined ? { message: end.message } : {}),
                },
              }
            : { running: {} },
        },
      ],
    },
  };
}

/** Seeds finished Jobs not recorded yet, each with its pod, ended as `ends` says (by volume). */
function finishedWithPods(
  ends: Partial<
    Record<'data' | 'logs', { job: 'Complete' | 'Failed'; pod: { message?: string; failed?: boolean } }>
  >,
) {
  return (c: FakeCluster) => {
    for (const [volume, end] of Object.entries(ends) as Array<
      ['data' | 'logs', { job: 'Complete' | 'Failed'; pod: { message?: string; failed?: boolean } }]
    >) {
      const [job] = c.seed(CoreTypes.Job, copyJob(volume, 1, { type: end.job, at: NOW }, {}));
      c.seed(CoreTypes.Pod, copyPod(job!, end.pod));
    }
  };
}

/** The backup claims, as this controller made them, Bound. */
const backupClaims = (b: VolumeBackup = backup()) =>
  (['data', 'logs'] as const).map((v) => ({
    ...desiredBackupClaim(b, v, sourceClaims(machine())[0]!),
    status: { phase: 'Bound' },
  }));

async function setup(b: VolumeBackup | undefined, ...seed: Array<(cluster: FakeCluster) => void>) {
  const cluster = new FakeCluster();
  if (b) cluster.seed(VOLUME_BACKUP, b);
  cluster.seed(MACHINE, reporting());
  cluster.seed(CoreTypes.PersistentVolumeClaim, ...sourceClaims(machine()));
  for (const s of seed) s(cluster);
  return harness<VolumeBackup>(
    cluster,
    { for: VOLUME_BACKUP },
    async (c, events) =>
      new VolumeBackupReconciler({
        client: c.kubeClient,
        machines: await c.informer(MACHINE),
        claims: await c.informer<CachedClaim>(CoreTypes.PersistentVolumeClaim),
        jobs: await c.informer<CachedJob>(CoreTypes.Job),
        pods: await c.informer<CachedPod>(CoreTypes.Pod),
        events: eventsFor(events, VOLUME_BACKUP_CONTROLLER, VOLUME_BACKUP),
        backupJobImage: IMAGE,
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

const ready = (h: Harness<VolumeBackup>, name = NAME) =>
  findCondition(h.status.last(name)?.conditions, 'Ready');
const restorable = (h: Harness<VolumeBackup>) => findCondition(h.status.last(NAME)?.conditions, 'Restorable');

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
      `create Pod ${NAME}-probe- (dry run)`,
      `create Job ${NAME}-data-1`,
      `create PersistentVolumeClaim ${NAME}-logs`,
      `create Pod ${NAME}-probe- (dry run)`,
      `create Job ${NAME}-logs-1`,
    ]);
    const [claim, , job] = h.client.writes();
    assert.deepEqual(claim?.body, desiredBackupClaim(backup(), 'data', sourceClaims(machine())[0]!));
    const sized = claim?.body as V1PersistentVolumeClaim | undefined;
    assert.equal(
      sized?.spec?.resources?.requests?.storage,
      '2Gi',
      'the capacity of the source, not its request',
    );
    assert.deepEqual(
      job?.body,
      desiredCopyJob(
        backup(),
        'data',
        { image: IMAGE, sourceClaim: 'web-data', attempt: 1, privilege: ROOT },
        3630,
      ),
    );
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
    assert.deepEqual(h.client.writeSummary(), [
      `create Pod ${NAME}-probe- (dry run)`,
      `create Job ${NAME}-data-2`,
    ]);
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

  it('all copied and verified: each record on its Job before its pod goes, then Completed with the manifests', async () => {
    const h = await setup(running(), (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims());
      finishedWithPods({
        data: { job: 'Complete', pod: { message: copyReport(MANIFESTS.data) } },
        logs: { job: 'Complete', pod: { message: copyReport(MANIFESTS.logs) } },
      })(c);
    });
    assert.equal(await h.reconcile(NAME), undefined);
    // The pods hold the claims (the PVC protection controller counts them), so they go; but only
    // once their report is on the Job, since it goes with them.
    assert.deepEqual(h.client.writeSummary(), [
      `patch Job ${NAME}-data-1`,
      `delete Pod ${NAME}-data-1-abcde`,
      `patch Job ${NAME}-logs-1`,
      `delete Pod ${NAME}-logs-1-abcde`,
    ]);
    const [patch, deletion] = h.client.writes();
    const sent = patch?.body as { metadata: { uid?: string; annotations: Record<string, string> } };
    assert.ok(sent.metadata.uid, 'the patch is for this very Job');
    assert.deepEqual(Object.keys(sent.metadata.annotations), [COPY_REPORT_ANNOTATION]);
    assert.deepEqual(
      parseCopyReport(sent.metadata.annotations[COPY_REPORT_ANNOTATION])?.target,
      MANIFESTS.data,
    );
    assert.ok(
      (deletion?.body as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid,
      'deletes that very pod',
    );
    const stored = h.cluster.server.get(CoreTypes.Job, 'ns', `${NAME}-data-1`);
    assert.ok(stored.metadata?.annotations?.[COPY_REPORT_ANNOTATION], 'the Job keeps the record');
    assert.deepEqual(h.cluster.server.list(CoreTypes.Pod), []);

    const status = h.status.last(NAME);
    assert.equal(status?.phase, 'Completed');
    assert.equal(status?.completionTime, '2026-01-01T12:00:00Z');
    assert.deepEqual(status?.volumes, [
      { name: 'data', backupClaimName: `${NAME}-data`, manifest: MANIFESTS.data },
      { name: 'logs', backupClaimName: `${NAME}-logs`, manifest: MANIFESTS.logs },
    ]);
    assert.equal(ready(h)?.message, 'all 2 volumes copied and verified');
    assert.equal(restorable(h)?.status, 'True');
    assert.deepEqual(h.eventSummary(), [
      'Normal CopyVerified',
      'Normal CopyVerified',
      'Normal BackupCompleted',
    ]);
    assert.match(
      h.events.events[0]?.note ?? '',
      new RegExp(
        `^volume data: 3 files, 4096 bytes, ${MANIFESTS.data.digest} copied and verified; copied in 2.0s .*\\(Job ${NAME}-data-1\\)$`,
      ),
    );
  });

  it('a copy still running: its pod is left alone, nothing recorded', async () => {
    const h = await setup(running(), (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims());
      const [data] = c.seed(CoreTypes.Job, copyJob('data', 1));
      c.seed(CoreTypes.Pod, copyPod(data!));
      c.seed(CoreTypes.Job, copyJob('logs', 1, { type: 'Complete', at: NOW }));
    });
    await h.reconcile(NAME);
    assert.deepEqual(h.client.writes(), []);
    assert.equal(h.cluster.server.list(CoreTypes.Pod).length, 1);
    assert.equal(h.status.last(NAME)?.phase, 'Running');
  });

  it('a completed Job whose pod has not reported yet: copying, the pod kept, looked at again shortly', async () => {
    const h = await setup(running(), (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims());
      const [data] = c.seed(CoreTypes.Job, copyJob('data', 1, { type: 'Complete', at: NOW }, {}));
      c.seed(CoreTypes.Pod, copyPod(data!));
      c.seed(CoreTypes.Job, copyJob('logs', 1, { type: 'Complete', at: NOW }));
    });
    assert.deepEqual(await h.reconcile(NAME), { requeueAfterMs: 2000 });
    assert.deepEqual(h.client.writes(), [], 'nothing recorded, no pod deleted');
    assert.equal(h.status.last(NAME)?.phase, 'Running');
    assert.match(ready(h)?.message ?? '', /copied 1 of 2 volumes; copying data \(Job web-0b7c9a52-data-1\)/);
  });

  it('past its deadline, a copy that ended in time is judged before the deadline is: its report may be on its way', async () => {
    const late = backup({ phase: 'Running', startTime: new Date(NOW - 2 * HOUR).toISOString() });
    const h = await setup(late, (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims());
      const [data] = c.seed(CoreTypes.Job, copyJob('data', 1, { type: 'Complete', at: NOW - 1000 }, {}));
      c.seed(CoreTypes.Pod, copyPod(data!));
      c.seed(CoreTypes.Job, copyJob('logs', 1, { type: 'Complete', at: NOW - 1000 }));
    });
    assert.deepEqual(await h.reconcile(NAME), { requeueAfterMs: 2000 });
    assert.equal(h.status.last(NAME), undefined, 'not Failed with DeadlineExceeded yet');
  });

  it("a failed copy: the pod's words on the Job before its pod goes, a CopyFailed Warning, and a retry saying them", async () => {
    const h = await setup(running(), (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims());
      finishedWithPods({ data: { job: 'Failed', pod: { failed: true, message: `${POD_SAYS}\n` } } })(c);
      c.seed(CoreTypes.Job, copyJob('logs', 1, { type: 'Complete', at: NOW }));
    });
    assert.deepEqual(await h.reconcile(NAME), { requeueAfterMs: 10_000 });
    assert.deepEqual(h.client.writeSummary(), [
      `patch Job ${NAME}-data-1`,
      `delete Pod ${NAME}-data-1-abcde`,
    ]);
    const sent = h.client.writes()[0]?.body as { metadata: { annotations: Record<string, string> } };
    assert.deepEqual(sent.metadata.annotations, { [COPY_FAILURE_ANNOTATION]: POD_SAYS });
    assert.deepEqual(h.eventSummary(), ['Warning CopyFailed']);
    assert.equal(h.events.events[0]?.note, `volume data: copy Job ${NAME}-data-1: ${POD_SAYS}`);
    assert.ok(ready(h)?.message.includes(POD_SAYS), ready(h)?.message);

    mock.timers.tick(10_000);
    await h.cluster.sync();
    h.client.clearActions();
    h.events.events.length = 0;
    await h.reconcile(NAME);
    assert.deepEqual(h.client.writeSummary(), [
      `create Pod ${NAME}-probe- (dry run)`,
      `create Job ${NAME}-data-2`,
    ]);
    assert.deepEqual(h.eventSummary(), ['Warning CopyRetried']);
    assert.ok(h.events.events[0]?.note.includes(POD_SAYS), h.events.events[0]?.note);
  });

  it('a copy unlike its source (the pod reports unequal manifests): that attempt failed, and it is retried', async () => {
    const h = await setup(running(), (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims());
      finishedWithPods({
        data: { job: 'Complete', pod: { message: copyReport(MANIFESTS.data, MANIFESTS.logs) } },
      })(c);
      c.seed(CoreTypes.Job, copyJob('logs', 1, { type: 'Complete', at: NOW }));
    });
    assert.deepEqual(await h.reconcile(NAME), { requeueAfterMs: 10_000 });
    assert.deepEqual(h.client.writeSummary(), [
      `patch Job ${NAME}-data-1`,
      `delete Pod ${NAME}-data-1-abcde`,
    ]);
    const sent = h.client.writes()[0]?.body as { metadata: { annotations: Record<string, string> } };
    assert.match(
      sent.metadata.annotations[COPY_FAILURE_ANNOTATION] ?? '',
      /^the copy differs from its source: source 3 files, 4096 bytes, sha256:0101.*; copy 6 files, 8192 bytes, sha256:0202/,
    );
    assert.deepEqual(h.eventSummary(), ['Warning CopyFailed']);
    const status = h.status.last(NAME);
    assert.equal(status?.phase, 'Running', 'not Completed');
    assert.equal(status?.volumes?.[0]?.manifest, undefined, 'no manifest for an unproven copy');
    assert.match(
      ready(h)?.message ?? '',
      /copied 1 of 2 volumes; volume data: copy Job web-0b7c9a52-data-1 failed: the copy differs from its source.*retrying in 10s/,
    );

    mock.timers.tick(10_000);
    await h.cluster.sync();
    h.client.clearActions();
    await h.reconcile(NAME);
    assert.deepEqual(h.client.writeSummary(), [
      `create Pod ${NAME}-probe- (dry run)`,
      `create Job ${NAME}-data-2`,
    ]);
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

describe('VolumeBackupReconciler: who a copy runs as', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: NOW }));
  afterEach(() => mock.timers.reset());

  /** The pod spec of the copy Job created for `volume`. */
  const copyPodSpec = (h: Harness<VolumeBackup>, volume = 'data') =>
    (
      h.client.writes({ verb: 'create', kind: 'Job', name: `${NAME}-${volume}-1` })[0]?.body as
        | V1Job
        | undefined
    )?.spec?.template.spec;

  it('asks admission first, with a dry run of the root copy pod, which stores nothing', async () => {
    const h = await setup(backup());
    await h.reconcile(NAME);
    const probes = h.client.writes({ verb: 'create', kind: 'Pod' });
    assert.equal(probes.length, 2, 'one per copy Job');
    for (const probe of probes) assert.equal(probe.dryRun, true);
    const probe = probes[0]?.body as V1Pod;
    assert.equal(probe.metadata?.namespace, 'ns', "in the backup's namespace, where Pod Security applies");
    assert.equal(probe.spec?.securityContext?.runAsUser, 0);
    assert.deepEqual(h.cluster.server.list(CoreTypes.Pod), [], 'nothing stored');
  });

  it('admitted: the copy runs as root with only CHOWN, DAC_OVERRIDE, FOWNER and FSETID, and no fsGroup', async () => {
    const h = await setup(backup());
    await h.reconcile(NAME);
    const spec = copyPodSpec(h);
    assert.equal(spec?.securityContext?.runAsUser, 0);
    assert.equal(spec?.securityContext?.fsGroup, undefined);
    assert.deepEqual(spec?.containers[0]?.securityContext?.capabilities, {
      drop: ['ALL'],
      add: ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID'],
    });
    assert.ok(!spec?.containers[0]?.args?.includes('--pod-security-level'));
  });

  it('refused by Pod Security ("restricted:latest"): the copy runs as non-root 65532, and the mover knows the level', async () => {
    const h = await setup(backup());
    h.client.fail({ verb: 'create', kind: 'Pod' }, new ApiError(403, 'Forbidden', POD_SECURITY_REFUSAL));
    await h.reconcile(NAME);
    assert.deepEqual(h.client.writeSummary({ kind: 'Job' }), [
      `create Job ${NAME}-data-1`,
      `create Job ${NAME}-logs-1`,
    ]);
    const spec = copyPodSpec(h);
    assert.equal(spec?.securityContext?.runAsNonRoot, true);
    assert.equal(spec?.securityContext?.runAsUser, 65532);
    assert.equal(spec?.securityContext?.runAsGroup, 65532);
    assert.equal(spec?.securityContext?.fsGroup, undefined, 'an fsGroup would change the source group');
    assert.deepEqual(spec?.containers[0]?.securityContext?.capabilities, { drop: ['ALL'] }, 'nothing added');
    assert.deepEqual(spec?.containers[0]?.args?.slice(-2), ['--pod-security-level', 'restricted']);
    assert.deepEqual(restrictedViolations(spec!), []);
    assert.deepEqual(
      h.client.writes({ verb: 'create', kind: 'Job' })[0]?.body,
      desiredCopyJob(
        backup(),
        'data',
        { image: IMAGE, sourceClaim: 'web-data', attempt: 1, privilege: NONROOT },
        3630,
      ),
    );
  });

  it("refused by Pod Security, with copyAs: the copy runs as the workload's user and group, its fsGroup on the target only", async () => {
    const b = backup();
    b.spec.copyAs = { runAsUser: 999, runAsGroup: 998, fsGroup: 70000 };
    const h = await setup(b);
    h.client.fail({ verb: 'create', kind: 'Pod' }, new ApiError(403, 'Forbidden', POD_SECURITY_REFUSAL));
    await h.reconcile(NAME);
    const spec = copyPodSpec(h);
    assert.deepEqual(spec?.securityContext, {
      runAsNonRoot: true,
      runAsUser: 999,
      runAsGroup: 998,
      fsGroup: 70000,
      fsGroupChangePolicy: 'OnRootMismatch',
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(
      spec?.volumes?.find((v) => v.name === 'source')?.persistentVolumeClaim,
      { claimName: 'web-data', readOnly: true },
      'read-only: the kubelet applies no fsGroup to the source',
    );
    assert.deepEqual(spec?.containers[0]?.securityContext?.capabilities, { drop: ['ALL'] });
    assert.deepEqual(restrictedViolations(spec!), []);
    assert.match(
      h.events.events.find((e) => e.reason === 'CopyStarted')?.note ?? '',
      /with Job web-0b7c9a52-data-1 as uid 999, gid 998, fsGroup 70000$/,
    );
  });

  it('admitted as root, with copyAs: still root, which keeps every owner', async () => {
    const b = backup();
    b.spec.copyAs = { runAsUser: 999, runAsGroup: 999, fsGroup: 999 };
    const h = await setup(b);
    await h.reconcile(NAME);
    const spec = copyPodSpec(h);
    assert.equal(spec?.securityContext?.runAsUser, 0);
    assert.equal(spec?.securityContext?.fsGroup, undefined);
  });

  it('refused for another reason (a quota): still root, the Job meets the refusal and says it', async () => {
    const h = await setup(backup());
    h.client.fail(
      { verb: 'create', kind: 'Pod' },
      new ApiError(403, 'Forbidden', 'pods "x" is forbidden: exceeded quota: no-pods'),
    );
    await h.reconcile(NAME);
    assert.equal(copyPodSpec(h)?.securityContext?.runAsUser, 0);
  });
});

describe('VolumeBackupReconciler: which claims a VolumeBackup may copy', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: NOW }));
  afterEach(() => mock.timers.reset());

  /** A claim of the namespace that no Machine reports (not labelled: the cache does not hold it). */
  const payroll: V1PersistentVolumeClaim = {
    metadata: { name: 'payroll', namespace: 'ns' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    status: { phase: 'Bound', capacity: { storage: '1Gi' } },
  };
  /** The fixture's VolumeBackup (naming Machine web), of one volume, `claimName`. */
  const naming = (claimName: string): VolumeBackup => {
    const b = backup();
    b.spec.volumes = [{ name: 'data', claimName }];
    return b;
  };

  const refusals: { what: string; claim: string; seed?: (c: FakeCluster) => void; says: RegExp }[] = [
    {
      what: 'a claim the Machine does not report for that volume',
      claim: 'payroll',
      says: /volume data: claim payroll is not the claim Machine web reports for it \(web-data\); a VolumeBackup that names a Machine copies only the claims that Machine reports/,
    },
    {
      what: "the Machine's claim, but the Machine of that name has another uid",
      claim: 'web-data',
      seed: (c) => {
        c.server.delete(MACHINE, 'ns', 'web');
        c.seed(MACHINE, reporting(machine({}, { uid: 'ffffffff-1111-2222-3333-444455556666' })));
      },
      says: /volume data: Machine web \(uid 0b7c9a52-1111-2222-3333-444455556666\) not found; a VolumeBackup that names a Machine copies only the claims that Machine reports/,
    },
    {
      what: 'a Machine that does not exist',
      claim: 'web-data',
      seed: (c) => c.server.delete(MACHINE, 'ns', 'web'),
      says: /volume data: Machine web \(uid 0b7c9a52-1111-2222-3333-444455556666\) not found; .*copies only the claims that Machine reports/,
    },
  ];
  for (const r of refusals) {
    it(`naming a Machine, ${r.what}: Failed at once, nothing created`, async () => {
      const h = await setup(naming(r.claim), (c) => {
        c.seed(CoreTypes.PersistentVolumeClaim, payroll);
        r.seed?.(c);
      });
      assert.equal(await h.reconcile(NAME), undefined);
      assert.deepEqual(h.client.writes(), [], 'no claim, no probe, no Job');
      assert.equal(h.status.last(NAME)?.phase, 'Failed');
      assert.equal(ready(h)?.reason, 'BackupFailed');
      assert.match(ready(h)?.message ?? '', r.says);
      assert.deepEqual(h.eventSummary(), ['Warning BackupFailed']);
    });
  }

  it('a standalone VolumeBackup (no Machine named) copies any claim of the namespace', async () => {
    const standalone: VolumeBackup = {
      apiVersion: 'infra.basicoperator.dev/v1alpha1',
      kind: 'VolumeBackup',
      metadata: { name: 'adhoc', namespace: 'ns', uid: 'adhoc-uid', generation: 1 },
      spec: { volumes: [{ name: 'data', claimName: 'payroll' }] },
    };
    const h = await setup(standalone, (c) => c.seed(CoreTypes.PersistentVolumeClaim, payroll));
    await h.reconcile('adhoc');
    assert.deepEqual(h.client.writeSummary(), [
      'create PersistentVolumeClaim adhoc-data',
      'create Pod adhoc-probe- (dry run)',
      'create Job adhoc-data-1',
    ]);
    const job = h.client.writes({ kind: 'Job' })[0]?.body as V1Job;
    assert.deepEqual(job.spec?.template.spec?.volumes?.[0], {
      name: 'source',
      persistentVolumeClaim: { claimName: 'payroll', readOnly: true },
    });
    assert.equal(h.status.last('adhoc')?.phase, 'Running');
  });
});

describe('VolumeBackupReconciler: backup claims stay while their VolumeBackup exists', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: NOW }));
  afterEach(() => mock.timers.reset());

  const completedStatus = (): VolumeBackupStatus => ({
    phase: 'Completed',
    startTime: new Date(NOW - HOUR).toISOString(),
    completionTime: new Date(NOW - MINUTE).toISOString(),
    attempts: 2,
    volumes: [
      { name: 'data', backupClaimName: `${NAME}-data`, manifest: MANIFESTS.data },
      { name: 'logs', backupClaimName: `${NAME}-logs`, manifest: MANIFESTS.logs },
    ],
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'BackupCompleted',
        message: 'all 2 volumes copied and verified',
        lastTransitionTime: '2026-01-01T11:59:00Z',
      },
      {
        type: 'Restorable',
        status: 'True',
        reason: 'BackupClaimsBound',
        message: 'all 2 backup claims are Bound',
        lastTransitionTime: '2026-01-01T11:59:00Z',
      },
    ],
  });
  const completed = () => backup(completedStatus());
  /** Asks the API server to delete the backup claim of `volume` (its finalizer keeps it, Terminating). */
  const deleteClaim = (volume: string) => (c: FakeCluster) =>
    c.server.delete(CoreTypes.PersistentVolumeClaim, 'ns', `${NAME}-${volume}`);

  it('creates its backup claims with the backup-claim finalizer', async () => {
    const h = await setup(backup());
    await h.reconcile(NAME);
    for (const volume of ['data', 'logs']) {
      const claim = h.cluster.server.get(CoreTypes.PersistentVolumeClaim, 'ns', `${NAME}-${volume}`);
      assert.deepEqual(claim.metadata?.finalizers, [BACKUP_CLAIM_FINALIZER]);
    }
  });

  it('a Completed backup whose claims are Bound: Restorable True, and nothing written again', async () => {
    const h = await setup(completed(), (c) => c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims()));
    assert.equal(await h.reconcile(NAME), undefined);
    assert.deepEqual(h.client.writes(), []);
    assert.deepEqual(h.status.written, [], 'Restorable stays True: no status write');
    assert.deepEqual(h.eventSummary(), []);
  });

  it('a Completed backup whose claim is being deleted: Restorable False (BackupClaimDeleting), a Warning, the claim kept', async () => {
    const h = await setup(completed(), (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims());
      deleteClaim('logs')(c);
    });
    await h.reconcile(NAME);
    assert.deepEqual(h.client.writes(), [], 'its finalizer stays: the VolumeBackup lives');
    const claim = h.cluster.server.get(CoreTypes.PersistentVolumeClaim, 'ns', `${NAME}-logs`);
    assert.ok(claim.metadata?.deletionTimestamp);
    assert.deepEqual(claim.metadata?.finalizers, [BACKUP_CLAIM_FINALIZER]);
    assert.equal(h.status.last(NAME)?.phase, 'Completed');
    assert.equal(restorable(h)?.status, 'False');
    assert.equal(restorable(h)?.reason, 'BackupClaimDeleting');
    assert.match(
      restorable(h)?.message ?? '',
      /backup claim web-0b7c9a52-logs of volume logs was asked to be deleted/,
    );
    assert.deepEqual(h.eventSummary(), ['Warning BackupClaimDeleting']);
    assert.equal(h.events.events[0]?.note, restorable(h)?.message);

    await h.reconcile(NAME);
    assert.equal(h.status.written.length, 1, 'said once');
    assert.deepEqual(h.eventSummary(), ['Warning BackupClaimDeleting']);
  });

  it('a Completed backup whose claim is gone: Restorable False (BackupClaimMissing), with a Warning', async () => {
    const h = await setup(completed(), (c) => c.seed(CoreTypes.PersistentVolumeClaim, backupClaims()[0]!));
    await h.reconcile(NAME);
    assert.equal(restorable(h)?.status, 'False');
    assert.equal(restorable(h)?.reason, 'BackupClaimMissing');
    assert.match(
      restorable(h)?.message ?? '',
      /backup claim web-0b7c9a52-logs of volume logs does not exist/,
    );
    assert.deepEqual(h.eventSummary(), ['Warning BackupClaimMissing']);
  });

  it('a Completed backup whose claims were made before the finalizer: they get it', async () => {
    const h = await setup(completed(), (c) =>
      c.seed(
        CoreTypes.PersistentVolumeClaim,
        ...backupClaims().map((claim) => ({
          ...claim,
          metadata: { ...claim.metadata, finalizers: undefined },
        })),
      ),
    );
    await h.reconcile(NAME);
    assert.deepEqual(h.client.writeSummary(), [
      `patch PersistentVolumeClaim ${NAME}-data`,
      `patch PersistentVolumeClaim ${NAME}-logs`,
    ]);
    for (const volume of ['data', 'logs']) {
      const claim = h.cluster.server.get(CoreTypes.PersistentVolumeClaim, 'ns', `${NAME}-${volume}`);
      assert.deepEqual(claim.metadata?.finalizers, [BACKUP_CLAIM_FINALIZER]);
    }
  });

  it('its VolumeBackup gone: a claim being deleted loses the finalizer (and goes), one not being deleted keeps it', async () => {
    const h = await setup(undefined, (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims());
      deleteClaim('data')(c);
    });
    assert.equal(await h.reconcile(NAME), undefined);
    assert.deepEqual(h.client.writeSummary(), [`patch PersistentVolumeClaim ${NAME}-data`]);
    assert.throws(
      () => h.cluster.server.get(CoreTypes.PersistentVolumeClaim, 'ns', `${NAME}-data`),
      /not found/,
    );
    const kept = h.cluster.server.get(CoreTypes.PersistentVolumeClaim, 'ns', `${NAME}-logs`);
    assert.deepEqual(kept.metadata?.finalizers, [BACKUP_CLAIM_FINALIZER]);
  });

  it('its VolumeBackup being deleted: a claim being deleted loses the finalizer', async () => {
    const going = completed();
    going.metadata.finalizers = ['example.com/hold'];
    const h = await setup(going, (c) => {
      c.server.delete(VOLUME_BACKUP, 'ns', NAME);
      c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims());
      deleteClaim('data')(c);
      deleteClaim('logs')(c);
    });
    assert.equal(await h.reconcile(NAME), undefined);
    assert.deepEqual(h.client.writeSummary(), [
      `patch PersistentVolumeClaim ${NAME}-data`,
      `patch PersistentVolumeClaim ${NAME}-logs`,
    ]);
    assert.deepEqual(
      h.cluster.server.list(CoreTypes.PersistentVolumeClaim).map((c) => c.metadata?.name),
      ['web-data', 'web-logs'],
    );
    assert.deepEqual(h.status.written, [], 'a VolumeBackup being deleted gets no status');
  });

  it('the claims of an earlier VolumeBackup of the same name, being deleted, lose the finalizer, so the new one can start', async () => {
    // A recorded backup deleted by hand is made again under the same name (machinebackup/logic/plan.ts):
    // the garbage collector deletes the earlier one's claims, which must go before the new claims can
    // be made.
    const earlier = { ...backup(), metadata: { ...backup().metadata, uid: 'vb-earlier' } };
    const h = await setup(backup(), (c) => {
      c.seed(CoreTypes.PersistentVolumeClaim, ...backupClaims(earlier));
      deleteClaim('data')(c);
      deleteClaim('logs')(c);
    });
    assert.deepEqual(await h.reconcile(NAME), { requeueAfterMs: 2000 }, 'looks again once they are gone');
    assert.deepEqual(h.client.writeSummary(), [
      `patch PersistentVolumeClaim ${NAME}-data`,
      `patch PersistentVolumeClaim ${NAME}-logs`,
    ]);
    assert.deepEqual(
      h.cluster.server.list(CoreTypes.PersistentVolumeClaim).map((c) => c.metadata?.name),
      ['web-data', 'web-logs'],
    );

    await h.cluster.sync();
    h.client.clearActions();
    await h.reconcile(NAME);
    assert.deepEqual(h.client.writeSummary({ kind: 'PersistentVolumeClaim' }), [
      `create PersistentVolumeClaim ${NAME}-data`,
      `create PersistentVolumeClaim ${NAME}-logs`,
    ]);
    assert.equal(h.status.last(NAME)?.phase, 'Running');
  });
});
