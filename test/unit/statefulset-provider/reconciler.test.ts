// reconcile() of the StatefulSetMachine provider against a fake API server and real informers (with
// the provider's cache selections: only objects carrying its machine label are cached). Where
// kube-controller-manager would act (the pod and claims of the StatefulSet, the Job's outcome), the
// tests put its result on the server themselves.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import {
  STATEFULSET_MACHINE,
  type StatefulSetMachine,
} from '../../../examples/statefulset-provider/src/api.ts';
import {
  RESTORED_FROM_ANNOTATION,
  RESTORED_MANIFEST_ANNOTATION,
} from '../../../examples/statefulset-provider/src/names.ts';
import { desiredRestoreJob } from '../../../examples/statefulset-provider/src/restore.ts';
import { desiredRestoreClaim, STATEFUL_SET } from '../../../examples/statefulset-provider/src/statefulset.ts';
import { VOLUME_BACKUP } from '../../../src/apis/index.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import type { FakeCluster } from '../../support/fake/cluster.ts';
import type { Harness } from '../../support/fake/harness.ts';
import {
  backup,
  backupClaim,
  copyPod,
  copyReport,
  finished,
  MANIFEST,
  machine,
  NOW,
  OTHER,
  RESTORING,
  RUNNING_AND_READY,
  setup,
  statefulSetClaim,
  statefulSetPod,
  withStopRequest,
} from './fixtures.ts';

type H = Harness<StatefulSetMachine>;

const ready = (h: H) => h.status.last('db')?.conditions?.find((c) => c.type === 'Ready');

function serverSet(h: H): V1StatefulSet {
  return h.cluster.server.get(STATEFUL_SET, 'ns', 'db');
}

/** What kube-controller-manager makes from the StatefulSet: its claims (with `phase`) and its pod. */
async function controllerManagerActs(h: H, podStatus = RUNNING_AND_READY, claimPhase = 'Bound') {
  const set = serverSet(h);
  for (const t of set.spec?.volumeClaimTemplates ?? []) {
    h.cluster.seed(
      CoreTypes.PersistentVolumeClaim,
      statefulSetClaim(set, t.metadata?.name ?? '', claimPhase),
    );
  }
  h.cluster.seed(CoreTypes.Pod, statefulSetPod(set, podStatus));
  await h.cluster.sync();
}

function setStatefulSetStatus(cluster: FakeCluster, status: V1StatefulSet['status']): void {
  cluster.server.patch(STATEFUL_SET, {
    namespace: 'ns',
    name: 'db',
    patchType: 'merge',
    body: { status },
    subresource: 'status',
  });
}

/** A claim of the same name as a volume's, made by someone else (no label: the cache never shows it). */
const foreignClaim = (name: string, owner?: { kind: string; name: string }): V1PersistentVolumeClaim => ({
  metadata: {
    name,
    namespace: 'ns',
    ...(owner
      ? { ownerReferences: [{ apiVersion: 'apps/v1', ...owner, uid: 'old-uid', controller: true }] }
      : {}),
  },
  spec: {},
});

describe('StatefulSetMachineReconciler: realizing', () => {
  it('checks live that no claim is in the way, then creates the StatefulSet', async () => {
    const h = await setup(machine());
    assert.equal(await h.reconcile('db'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['create StatefulSet db']);
    assert.deepEqual(
      h.client.actions.filter((a) => a.verb === 'get').map((a) => `${a.kind} ${a.name}`),
      ['StatefulSet db', 'PersistentVolumeClaim data-db-0', 'PersistentVolumeClaim logs-db-0'],
    );
    assert.equal(h.status.last('db')?.phase, 'Provisioning');
    assert.equal(ready(h)?.reason, 'WaitingForPod');
    assert.deepEqual(h.status.last('db')?.volumes, [
      { name: 'data', claimName: 'data-db-0' },
      { name: 'logs', claimName: 'logs-db-0' },
    ]);
    assert.deepEqual(h.eventSummary(), ['Normal StatefulSetCreated']);
  });

  it('is Ready once the pod runs and is Ready and every claim is Bound', async () => {
    const h = await setup(machine());
    await h.reconcile('db');
    await controllerManagerActs(h, RUNNING_AND_READY, 'Pending');
    await h.reconcile('db');
    assert.equal(ready(h)?.reason, 'ClaimsNotBound');
    assert.equal(h.status.last('db')?.ready, false);

    await controllerManagerActs(h);
    h.client.clearActions();
    await h.reconcile('db');
    assert.deepEqual(h.client.actions, [], 'a running machine costs no API call');
    const status = h.status.last('db');
    assert.equal(status?.phase, 'Running');
    assert.equal(status?.ready, true);
    assert.equal(ready(h)?.status, 'True');
    assert.equal(ready(h)?.observedGeneration, 1);
    assert.equal(status?.providerID, 'statefulset://ns/db');
    assert.deepEqual(status?.addresses, [{ type: 'InternalIP', address: '10.0.0.7' }]);
    assert.deepEqual(status?.volumes, [
      { name: 'data', claimName: 'data-db-0', phase: 'Bound' },
      { name: 'logs', claimName: 'logs-db-0', phase: 'Bound' },
    ]);
    assert.deepEqual(h.eventSummary(), ['Normal StatefulSetCreated', 'Normal Running']);
  });

  it('scales a StatefulSet someone scaled back to one replica', async () => {
    const h = await setup(machine());
    await h.reconcile('db');
    h.cluster.server.patch(STATEFUL_SET, {
      namespace: 'ns',
      name: 'db',
      patchType: 'merge',
      body: { spec: { replicas: 3 } },
    });
    await h.cluster.sync();
    h.client.clearActions();
    await h.reconcile('db');
    assert.deepEqual(h.client.writeSummary(), ['patch StatefulSet db']);
    assert.equal(serverSet(h).spec?.replicas, 1);
  });

  it("a pod admission refuses: once kube-controller-manager synced the set and made no pod, a dry run of the template's pod says why (PodRefused, one Warning)", async () => {
    const h = await setup(machine({ securityContext: { privileged: true } }));
    await h.reconcile('db');
    const refusal =
      'pods "db-0" is forbidden: violates PodSecurity "restricted:latest": privileged (container "machine" must not set securityContext.privileged=true)';
    h.client.fail({ verb: 'create', kind: 'Pod', name: 'db-0' }, new ApiError(403, 'Forbidden', refusal));

    // Before kube-controller-manager has synced the set, a missing pod is only not made yet.
    h.client.clearActions();
    await h.reconcile('db');
    assert.deepEqual(h.client.writeSummary(), []);
    assert.equal(ready(h)?.reason, 'WaitingForPod');

    setStatefulSetStatus(h.cluster, { observedGeneration: 1, replicas: 0, availableReplicas: 0 });
    await h.cluster.sync();
    await h.reconcile('db');
    assert.deepEqual(h.client.writeSummary(), ['create Pod db-0 (dry run)']);
    const dryRun = h.client.writes({ verb: 'create', kind: 'Pod' })[0]?.body as V1Pod;
    assert.equal(dryRun.spec?.containers[0]?.securityContext?.privileged, true);
    assert.equal(h.status.last('db')?.phase, 'Provisioning');
    assert.equal(ready(h)?.reason, 'PodRefused');
    const message = ready(h)?.message ?? '';
    assert.ok(message.startsWith('the API server refuses pod db-0 of StatefulSet db: '), message);
    assert.ok(message.endsWith(`${refusal}; kube-controller-manager retries with backoff`), message);
    await h.reconcile('db');
    assert.deepEqual(h.eventSummary(), ['Normal StatefulSetCreated', 'Warning PodRefused'], 'one Event');

    // Admitted at last (the namespace's level changed): kube-controller-manager makes the pod.
    await controllerManagerActs(h);
    h.client.clearActions();
    await h.reconcile('db');
    assert.deepEqual(h.client.actions, []);
    assert.equal(ready(h)?.reason, 'Running');
  });

  it('an admitted dry run, or a pod the cache does not show yet, is no refusal: WaitingForPod', async () => {
    const h = await setup(machine());
    await h.reconcile('db');
    setStatefulSetStatus(h.cluster, { observedGeneration: 1, replicas: 0 });
    await h.cluster.sync();
    await h.reconcile('db');
    assert.equal(ready(h)?.reason, 'WaitingForPod');
    h.cluster.server.create(CoreTypes.Pod, statefulSetPod(serverSet(h), RUNNING_AND_READY));
    await h.reconcile('db');
    assert.equal(ready(h)?.reason, 'WaitingForPod', 'AlreadyExists: the pod is there, not yet in the cache');
  });

  it('fails, without a StatefulSet, when someone else has a claim of a volume name', async () => {
    const h = await setup(machine(), (c) =>
      c.seed(CoreTypes.PersistentVolumeClaim, foreignClaim('logs-db-0')),
    );
    assert.equal(await h.reconcile('db'), undefined);
    assert.deepEqual(h.client.writeSummary(), []);
    const status = h.status.last('db');
    assert.equal(status?.phase, 'Failed');
    assert.equal(status?.failureReason, 'ClaimConflict');
    assert.match(
      status?.failureMessage ?? '',
      /claim logs-db-0 exists and does not belong to this StatefulSetMachine/,
    );
    assert.deepEqual(h.eventSummary(), ['Warning ClaimConflict']);
  });

  it('waits (bounded) for the claims an earlier StatefulSet of the machine leaves behind', async () => {
    const h = await setup(machine(), (c) =>
      c.seed(CoreTypes.PersistentVolumeClaim, foreignClaim('data-db-0', { kind: 'StatefulSet', name: 'db' })),
    );
    assert.deepEqual(await h.reconcile('db'), { requeueAfterMs: 5000 });
    assert.deepEqual(h.client.writeSummary(), []);
    assert.equal(h.status.last('db')?.failureReason, undefined);
    assert.equal(ready(h)?.reason, 'WaitingForOldClaim');
  });

  it("fails when a StatefulSet of the name is someone else's", async () => {
    const h = await setup(machine(), (c) =>
      c.seed(STATEFUL_SET, {
        metadata: { name: 'db', namespace: 'ns' },
        spec: { selector: {}, template: {} },
      }),
    );
    await h.reconcile('db');
    assert.equal(h.status.last('db')?.failureReason, 'StatefulSetConflict');
    assert.deepEqual(h.client.writeSummary(), []);
  });

  it('does nothing for an object being deleted: the garbage collector takes what it owns', async () => {
    const deleting = {
      ...machine(),
      metadata: { ...machine().metadata, deletionTimestamp: NOW, finalizers: ['x'] },
    };
    const h = await setup(deleting);
    assert.equal(await h.reconcile('db'), undefined);
    assert.deepEqual(h.client.actions, []);
    assert.equal(h.status.written.length, 0);
  });
});

describe('StatefulSetMachineReconciler: restoring from a VolumeBackup', () => {
  /** The restore Job on the server, finished as `type` says, with one copy pod that ended so. */
  async function jobEnds(h: H, type: 'Complete' | 'Failed', exitCode: number, message?: string) {
    const job: V1Job = h.cluster.server.get(CoreTypes.Job, 'ns', 'db-data-restore');
    h.cluster.seed(CoreTypes.Pod, copyPod(job, 'db-data-restore-x1', exitCode, message));
    h.cluster.server.update(
      CoreTypes.Job,
      finished(job, type, type === 'Failed' ? 'BackoffLimitExceeded' : ''),
      'status',
    );
    await h.cluster.sync();
    h.client.clearActions();
  }

  /** A machine whose restore Job was created; the backup (`backup('Completed')` unless given) is there. */
  async function restoreStarted(volumeBackup = backup('Completed')): Promise<H> {
    const h = await setup(machine(RESTORING), (c) => c.seed(VOLUME_BACKUP, volumeBackup), backupClaim());
    await h.reconcile('db');
    assert.deepEqual(h.client.writeSummary({ kind: 'Job' }), ['create Job db-data-restore']);
    await h.cluster.sync();
    return h;
  }

  it('waits with a clear condition for a missing backup, then restores before the StatefulSet exists, verified against the manifest the backup recorded', async () => {
    const h = await setup(machine(RESTORING), backupClaim());
    assert.equal(await h.reconcile('db'), undefined);
    assert.deepEqual(h.client.writeSummary(), []);
    assert.equal(h.status.last('db')?.phase, 'Pending');
    assert.equal(ready(h)?.reason, 'BackupNotFound');
    assert.match(
      ready(h)?.message ?? '',
      /VolumeBackup old, which does not exist in this namespace; waiting/,
    );
    assert.deepEqual(h.eventSummary(), ['Warning BackupNotFound']);

    h.cluster.seed(VOLUME_BACKUP, backup('Pending'));
    await h.cluster.sync();
    await h.reconcile('db');
    assert.equal(ready(h)?.reason, 'WaitingForBackup');
    assert.deepEqual(h.client.writeSummary(), []);

    h.cluster.server.patch(VOLUME_BACKUP, {
      namespace: 'ns',
      name: 'old',
      patchType: 'merge',
      body: { status: backup('Completed').status },
      subresource: 'status',
    });
    await h.cluster.sync();
    await h.reconcile('db');
    assert.deepEqual(h.client.writeSummary(), [
      'create PersistentVolumeClaim data-db-0',
      'create Pod db-data-restore- (dry run)',
      'create Job db-data-restore',
    ]);
    assert.ok(
      h.client.actions.some((a) => a.verb === 'get' && a.name === 'old-data'),
      'the backup claim is read live: it is not in the cache',
    );
    const job = h.client.writes({ verb: 'create', kind: 'Job' })[0]?.body as V1Job;
    assert.deepEqual(
      job,
      desiredRestoreJob(machine(RESTORING), RESTORING.volumes![0]!, {
        backupClaimName: 'old-data',
        image: 'basic-operator:dev',
        activeDeadlineSeconds: 3600,
        privilege: { mode: 'root' },
        expect: MANIFEST,
      }),
    );
    assert.equal(h.cluster.server.list(CoreTypes.Pod).length, 0, 'the dry run stored no pod');
    assert.equal(h.status.last('db')?.phase, 'Provisioning');
    assert.equal(ready(h)?.reason, 'Restoring');

    await h.cluster.sync();
    h.client.clearActions();
    await h.reconcile('db');
    assert.deepEqual(h.client.writeSummary(), [], 'the Job is copying');

    await jobEnds(h, 'Complete', 0, copyReport(MANIFEST, MANIFEST));
    await h.reconcile('db');
    assert.deepEqual(h.client.writeSummary(), [
      'patch PersistentVolumeClaim data-db-0',
      'delete Job db-data-restore',
      'create StatefulSet db',
    ]);
    const claim = h.cluster.server.get(CoreTypes.PersistentVolumeClaim, 'ns', 'data-db-0');
    assert.equal(claim.metadata?.annotations?.[RESTORED_FROM_ANNOTATION], 'old/data');
    assert.equal(claim.metadata?.annotations?.[RESTORED_MANIFEST_ANNOTATION], `3:4096:${MANIFEST.digest}`);
    assert.equal(claim.metadata?.ownerReferences?.[0]?.kind, 'StatefulSetMachine');
    assert.deepEqual(h.eventSummary(), [
      'Warning BackupNotFound',
      'Normal RestoreStarted',
      'Normal RestoreCompleted',
      'Normal StatefulSetCreated',
    ]);
    assert.match(
      h.events.events[2]?.note ?? '',
      /verified: 3 files, 4096 bytes, sha256:a{64}, as the backup recorded/,
    );
  });

  it('where Pod Security refuses a root copy pod: the restore copies as uid 65532 and tells the mover the level', async () => {
    const h = await setup(
      machine(RESTORING),
      (c) => c.seed(VOLUME_BACKUP, backup('Completed')),
      backupClaim(),
    );
    h.client.fail(
      { verb: 'create', kind: 'Pod', name: 'db-data-restore-' },
      new ApiError(
        403,
        'Forbidden',
        'pods "db-data-restore-x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true',
      ),
    );
    await h.reconcile('db');
    const job = h.client.writes({ verb: 'create', kind: 'Job' })[0]?.body as V1Job;
    const spec = job.spec?.template.spec;
    assert.equal(spec?.securityContext?.runAsUser, 65532);
    assert.deepEqual(spec?.containers[0]?.args?.slice(-2), ['--pod-security-level', 'restricted']);
    assert.match(
      h.events.events.at(-1)?.note ?? '',
      /as uid 65532, gid 65532, fsGroup 65532 \(Pod Security "restricted" refuses a root copy here\)/,
    );
  });

  it("where Pod Security refuses a root copy pod: the restore copies as the machine's podSecurityContext says its pod runs", async () => {
    const h = await setup(
      machine({ ...RESTORING, podSecurityContext: { runAsUser: 999, runAsGroup: 998, fsGroup: 997 } }),
      (c) => c.seed(VOLUME_BACKUP, backup('Completed')),
      backupClaim(),
    );
    h.client.fail(
      { verb: 'create', kind: 'Pod', name: 'db-data-restore-' },
      new ApiError(
        403,
        'Forbidden',
        'pods "x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true',
      ),
    );
    await h.reconcile('db');
    const job = h.client.writes({ verb: 'create', kind: 'Job' })[0]?.body as V1Job;
    const security = job.spec?.template.spec?.securityContext;
    assert.deepEqual([security?.runAsUser, security?.runAsGroup, security?.fsGroup], [999, 998, 997]);
    assert.match(
      h.events.events.at(-1)?.note ?? '',
      /as uid 999, gid 998, fsGroup 997 \(Pod Security "restricted"/,
    );
  });

  it("a restored tree that differs from the backup's manifest: RestoreVerificationFailed, the claim unmarked, the Job kept, no StatefulSet", async () => {
    const h = await restoreStarted();
    await jobEnds(h, 'Complete', 0, copyReport(OTHER, OTHER));
    assert.equal(await h.reconcile('db'), undefined);
    assert.deepEqual(h.client.writeSummary(), []);
    const status = h.status.last('db');
    assert.equal(status?.phase, 'Failed');
    assert.equal(status?.failureReason, 'RestoreVerificationFailed');
    assert.match(
      status?.failureMessage ?? '',
      /expected 3 files, 4096 bytes, sha256:a{64}, found 2 files, 1024 bytes, sha256:b{64}; the StatefulSet is not created on unproven data; delete the Job to try again/,
    );
    assert.deepEqual(h.eventSummary().at(-1), 'Warning RestoreVerificationFailed');
    const claim = h.cluster.server.get(CoreTypes.PersistentVolumeClaim, 'ns', 'data-db-0');
    assert.equal(claim.metadata?.annotations?.[RESTORED_FROM_ANNOTATION], undefined);
  });

  it('a Job that succeeded whose copy pod left no report: RestoreVerificationFailed (read live first), never the StatefulSet', async () => {
    const h = await restoreStarted();
    const job: V1Job = h.cluster.server.get(CoreTypes.Job, 'ns', 'db-data-restore');
    h.cluster.server.update(CoreTypes.Job, finished(job, 'Complete'), 'status');
    await h.cluster.sync();
    h.client.clearActions();
    await h.reconcile('db');
    assert.ok(
      h.client.actions.some((a) => a.verb === 'list' && a.kind === 'Pod'),
      'no cached pod: listed live',
    );
    assert.deepEqual(h.client.writeSummary(), []);
    assert.equal(h.status.last('db')?.failureReason, 'RestoreVerificationFailed');
    assert.match(h.status.last('db')?.failureMessage ?? '', /copy pod is gone and left no report/);
  });

  it('a copy pod the cache does not show yet: its report is read live, and the restore goes on', async () => {
    const h = await restoreStarted();
    const job: V1Job = h.cluster.server.get(CoreTypes.Job, 'ns', 'db-data-restore');
    h.cluster.server.update(CoreTypes.Job, finished(job, 'Complete'), 'status');
    await h.cluster.sync();
    h.cluster.seed(CoreTypes.Pod, copyPod(job, 'db-data-restore-x1', 0, copyReport(MANIFEST, MANIFEST)));
    h.client.clearActions();
    await h.reconcile('db');
    assert.deepEqual(h.client.writeSummary(), [
      'patch PersistentVolumeClaim data-db-0',
      'delete Job db-data-restore',
      'create StatefulSet db',
    ]);
  });

  it('a backup recorded before copies were verified: accepted, with a Normal Event that says it was not checked against a recorded manifest', async () => {
    const h = await restoreStarted(backup('Completed', [{ name: 'data', backupClaimName: 'old-data' }]));
    await jobEnds(h, 'Complete', 0, copyReport(OTHER, OTHER));
    await h.reconcile('db');
    assert.deepEqual(h.client.writeSummary().at(-1), 'create StatefulSet db');
    const completed = h.events.events.find((e) => e.reason === 'RestoreCompleted');
    assert.match(completed?.note ?? '', /not against a recorded manifest/);
  });

  it("a failed restore copy: terminal, and its pod's last words reach a Warning RestoreCopyFailed (once) and the failure message; no StatefulSet", async () => {
    const h = await restoreStarted();
    const said = 'walking /source\nNoSpace: /target/big: write: no space left on device';
    await jobEnds(h, 'Failed', 1, said);
    await h.reconcile('db');
    assert.deepEqual(h.client.writeSummary(), []);
    const status = h.status.last('db');
    assert.equal(status?.phase, 'Failed');
    assert.equal(status?.failureReason, 'RestoreFailed');
    assert.match(
      status?.failureMessage ?? '',
      /BackoffLimitExceeded.*its copy pod said: walking \/source\nNoSpace: .*no space left on device; delete the Job/s,
    );
    assert.deepEqual(h.eventSummary().slice(-2), ['Warning RestoreCopyFailed', 'Warning RestoreFailed']);
    assert.match(h.events.events.at(-2)?.note ?? '', /no space left on device$/);

    await h.cluster.sync();
    await h.reconcile('db');
    assert.equal(h.eventSummary().filter((e) => e === 'Warning RestoreCopyFailed').length, 1);
  });

  it('a backup claim that is gone: BackupClaimLost at once, terminal, naming it; no claim, no Job', async () => {
    const h = await setup(machine(RESTORING), (c) => c.seed(VOLUME_BACKUP, backup('Completed')));
    await h.reconcile('db');
    assert.deepEqual(h.client.writeSummary(), []);
    const status = h.status.last('db');
    assert.equal(status?.failureReason, 'BackupClaimLost');
    assert.match(status?.failureMessage ?? '', /backup claim old-data of volume data does not exist/);
  });

  it('a failed restore Job is a terminal failure, and no StatefulSet is made', async () => {
    const h = await restoreStarted();
    const job: V1Job = h.cluster.server.get(CoreTypes.Job, 'ns', 'db-data-restore');
    h.cluster.server.update(CoreTypes.Job, finished(job, 'Failed', 'DeadlineExceeded'), 'status');
    await h.cluster.sync();
    h.client.clearActions();
    await h.reconcile('db');
    assert.deepEqual(h.client.writeSummary(), []);
    const status = h.status.last('db');
    assert.equal(status?.phase, 'Failed');
    assert.equal(status?.failureReason, 'RestoreFailed');
    assert.match(status?.failureMessage ?? '', /DeadlineExceeded/);
  });

  it('a failed backup is a terminal failure', async () => {
    const h = await setup(machine(RESTORING), (c) => c.seed(VOLUME_BACKUP, backup('Failed')));
    await h.reconcile('db');
    assert.equal(h.status.last('db')?.failureReason, 'BackupFailed');
    assert.deepEqual(h.client.writeSummary(), []);
  });
});

describe('StatefulSetMachineReconciler: the stop handshake', () => {
  async function runningMachine(): Promise<H> {
    const h = await setup(machine());
    await h.reconcile('db');
    await controllerManagerActs(h);
    setStatefulSetStatus(h.cluster, { observedGeneration: 1, replicas: 1 });
    await h.reconcile('db');
    assert.equal(h.status.last('db')?.phase, 'Running');
    h.cluster.server.patch(STATEFULSET_MACHINE, {
      namespace: 'ns',
      name: 'db',
      patchType: 'merge',
      body: { metadata: { annotations: { 'infra.basicoperator.dev/stop-requested': 'true' } } },
    });
    await h.cluster.sync();
    h.client.clearActions();
    return h;
  }

  it('scales to 0, keeps the claims, and says stopped only once live reads show the pod gone', async () => {
    const h = await runningMachine();
    assert.deepEqual(await h.reconcile('db'), { requeueAfterMs: 5000 });
    assert.deepEqual(h.client.writeSummary(), ['patch StatefulSet db']);
    assert.equal(serverSet(h).spec?.replicas, 0);
    assert.equal(h.status.last('db')?.phase, 'Stopping');
    assert.equal(h.status.last('db')?.stopped, false);
    assert.equal(h.status.last('db')?.ready, false);

    // The pod is gone from the server, but kube-controller-manager has not observed replicas 0 yet.
    h.cluster.server.delete(CoreTypes.Pod, 'ns', 'db-0');
    await h.cluster.sync();
    h.client.clearActions();
    await h.reconcile('db');
    assert.deepEqual(h.client.writeSummary(), [], 'scaled down once, never up again');
    assert.equal(h.status.last('db')?.stopped, false);
    assert.match(ready(h)?.message ?? '', /waiting for kube-controller-manager to scale StatefulSet db to 0/);

    setStatefulSetStatus(h.cluster, { observedGeneration: serverSet(h).metadata?.generation, replicas: 0 });
    await h.cluster.sync();
    assert.equal(await h.reconcile('db'), undefined);
    const status = h.status.last('db');
    assert.equal(status?.phase, 'Stopped');
    assert.equal(status?.stopped, true);
    assert.deepEqual(status?.volumes, [
      { name: 'data', claimName: 'data-db-0', phase: 'Bound' },
      { name: 'logs', claimName: 'logs-db-0', phase: 'Bound' },
    ]);
    assert.deepEqual(h.client.writeSummary(), [], 'the claims are kept');
    assert.deepEqual(h.eventSummary().slice(-2), ['Normal Stopping', 'Normal Stopped']);
  });

  it('reads the pod live: one the cache does not show yet keeps it Stopping', async () => {
    const h = await runningMachine();
    await h.reconcile('db');
    setStatefulSetStatus(h.cluster, { observedGeneration: serverSet(h).metadata?.generation, replicas: 0 });
    h.cluster.server.delete(CoreTypes.Pod, 'ns', 'db-0');
    await h.cluster.sync();
    // A pod the server has again, which the cache has not seen yet.
    h.cluster.seed(CoreTypes.Pod, statefulSetPod(serverSet(h), { phase: 'Pending' }));
    await h.reconcile('db');
    assert.equal(h.status.last('db')?.stopped, false);
    assert.match(ready(h)?.message ?? '', /pod db-0 is still running/);
  });

  it('stops a restore still copying and never creates the StatefulSet', async () => {
    const m = withStopRequest(machine(RESTORING));
    const volume = m.spec.volumes?.[0];
    assert.ok(volume);
    const h = await setup(m, (c) => {
      c.seed(VOLUME_BACKUP, backup('Completed'));
      c.seed(
        CoreTypes.Job,
        desiredRestoreJob(m, volume, {
          backupClaimName: 'old-data',
          image: 'basic-operator:dev',
          activeDeadlineSeconds: 3600,
          privilege: { mode: 'root' },
        }),
      );
      c.seed(CoreTypes.PersistentVolumeClaim, {
        ...desiredRestoreClaim(m, volume),
        status: { phase: 'Bound' },
      });
    });
    assert.deepEqual(await h.reconcile('db'), { requeueAfterMs: 5000 });
    assert.deepEqual(h.client.writeSummary(), ['delete Job db-data-restore']);
    assert.deepEqual(h.client.writes()[0]?.body, {
      propagationPolicy: 'Foreground',
      preconditions: { uid: h.cluster.server.get(CoreTypes.Job, 'ns', 'db-data-restore').metadata?.uid },
    });
    assert.equal(h.status.last('db')?.stopped, false);

    // The Job's pods are gone: the garbage collector releases the foreground deletion.
    h.cluster.server.patch(CoreTypes.Job, {
      namespace: 'ns',
      name: 'db-data-restore',
      patchType: 'merge',
      body: { metadata: { finalizers: null } },
    });
    await h.cluster.sync();
    h.client.clearActions();
    assert.equal(await h.reconcile('db'), undefined);
    assert.deepEqual(h.client.writeSummary(), []);
    assert.equal(h.status.last('db')?.stopped, true);
    assert.deepEqual(h.status.last('db')?.volumes, [
      { name: 'data', claimName: 'data-db-0', phase: 'Bound' },
    ]);
  });

  it('is stopped at once when asked before anything ran', async () => {
    const h = await setup(withStopRequest(machine()));
    assert.equal(await h.reconcile('db'), undefined);
    assert.deepEqual(h.client.writeSummary(), []);
    assert.equal(h.status.last('db')?.stopped, true);
    assert.deepEqual(h.status.last('db')?.volumes, []);
  });
});
