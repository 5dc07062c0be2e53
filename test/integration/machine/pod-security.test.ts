// Copy Jobs in a namespace that enforces the Pod Security `restricted` profile, and backups that can
// never finish: kube-apiserver's PodSecurity admission and ResourceQuota are real here, so a copy pod
// that breaks `restricted` is refused exactly as on a production cluster. A backup must then fail
// with its reason by its deadline, never stay Running forever. And a Machine there that asks for a
// privileged container: its PodMachine's pod is refused (transient; the Machine waits and says why),
// yet it is backed up on deletion and a new Machine is restored there, since the copy and restore
// Jobs comply. (A Machine without security fields runs there: pod-fields.test.ts.)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { labelNamespace } from '../../../e2e/support/namespace.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  MACHINE,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  VOLUME_BACKUP,
  VOLUME_BACKUP_FINALIZER,
  type VolumeBackup,
} from '../../../src/apis/index.ts';
import { RESTORED_FROM_ANNOTATION } from '../../../src/controllers/podmachine/names.ts';
import { registerVolumeBackupController } from '../../../src/controllers/volumebackup/index.ts';
import { JOB_DEADLINE_MARGIN_MS } from '../../../src/controllers/volumebackup/logic/deadline.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { toMillis } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { OPERATOR_DEFAULTS } from '../../support/operator-options.ts';
import { type OperatorSuite, startOperatorSuite } from '../../support/suite.ts';
import {
  backups,
  claims,
  condition,
  controllerUid,
  createQuota,
  getMachine,
  getPodMachine,
  isComplete,
  jobs,
  type MachineSuite,
  machine,
  pods,
  prepareCluster,
  startMachineSuite,
  stopMachineSuite,
  waitForEvent,
  waitForGone,
  waitForMachine,
} from './helpers.ts';

const RESTRICTED = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/enforce-version': 'latest',
};
const PSA_REFUSAL = /violates PodSecurity "restricted:latest"/;

/** Short, so a stuck backup fails within the test; long enough for a kwok copy to finish. */
const DEADLINE_MS = 20_000;

describe('copy Jobs under Pod Security restricted, and backups that cannot finish', () => {
  let suite: OperatorSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    await prepareCluster(10);
    suite = await startOperatorSuite('machine-psa', (m) =>
      registerVolumeBackupController(m, {
        ...OPERATOR_DEFAULTS,
        volumeCopyDeadlineMs: DEADLINE_MS,
        retryBackoffMs: 500,
      }),
    );
    ({ client, ns } = suite);
    await labelNamespace(client, ns, RESTRICTED);
  });
  after(() => stopMachineSuite(suite));

  async function sourceClaim(name: string, storageClassName?: string): Promise<void> {
    await client.create<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: ns, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE } },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
        ...(storageClassName ? { storageClassName } : {}),
      },
    });
  }

  /** A hand-made, standalone VolumeBackup of one claim (no Machine involved). */
  async function volumeBackup(name: string, claimName: string): Promise<VolumeBackup> {
    return client.create<VolumeBackup>(VOLUME_BACKUP, {
      apiVersion: VOLUME_BACKUP.apiVersion,
      kind: VOLUME_BACKUP.kind,
      metadata: { name, namespace: ns },
      spec: { volumes: [{ name: 'data', claimName }] },
    });
  }

  async function waitForPhase(name: string, phase: string, timeoutMs: number): Promise<VolumeBackup> {
    return waitFor(
      `VolumeBackup ${name} to be ${phase}`,
      async () => {
        const b = await client.get<VolumeBackup>(VOLUME_BACKUP, ns, name);
        return b.status?.phase === phase ? b : undefined;
      },
      { timeoutMs },
    );
  }

  it('the copy pods are admitted in a restricted namespace and the backup completes', async () => {
    await sourceClaim('plain');
    await volumeBackup('plain-backup', 'plain');
    const pod = await waitFor(
      'a copy pod to be admitted',
      async () =>
        (await pods(client, ns)).find((p: V1Pod) => p.metadata?.name?.startsWith('plain-backup-data-1')),
      { timeoutMs: 30_000 },
    );
    assert.equal(pod.spec?.securityContext?.runAsNonRoot, true);
    const done = await waitForPhase('plain-backup', 'Completed', 60_000);
    assert.equal(condition(done, 'Ready')?.reason, 'BackupCompleted');
    const job = (await jobs(client, ns)).find((j) => j.metadata?.name === 'plain-backup-data-1');
    assert.ok(job?.spec?.activeDeadlineSeconds !== undefined, 'the copy Job has a deadline');
    assert.ok(job.spec.activeDeadlineSeconds <= (DEADLINE_MS + JOB_DEADLINE_MARGIN_MS) / 1000);
  });

  it('a copy whose claims never bind fails by the deadline, saying why', async () => {
    await sourceClaim('unbound', 'no-such-class');
    const created = await volumeBackup('unbound-backup', 'unbound');
    const failed = await waitForPhase('unbound-backup', 'Failed', DEADLINE_MS + 30_000);
    const ready = condition(failed, 'Ready');
    assert.equal(ready?.reason, 'DeadlineExceeded');
    assert.match(ready?.message ?? '', /not completed within the deadline of 20s/);
    assert.match(
      ready?.message ?? '',
      /volume data: copy pod unbound-backup-data-1-\w+ is Pending, not scheduled/,
    );
    const took = toMillis(failed.status?.completionTime)! - toMillis(created.metadata.creationTimestamp)!;
    assert.ok(took < DEADLINE_MS + 10_000, `failed ${took} ms after its creation`);
    const event = await waitForEvent(client, ns, 'VolumeBackup', 'unbound-backup', 'DeadlineExceeded');
    assert.equal(event.type, 'Warning');
  });

  it('a copy whose pods are refused fails by the deadline with the refusal', async () => {
    // No pod may be created in the namespace any more: the Job controller's creates are refused.
    await createQuota(client, ns, 'no-pods', { pods: '0' });
    await sourceClaim('refused');
    const created = await volumeBackup('refused-backup', 'refused');
    const failed = await waitForPhase('refused-backup', 'Failed', DEADLINE_MS + 30_000);
    const ready = condition(failed, 'Ready');
    assert.equal(ready?.reason, 'DeadlineExceeded');
    assert.match(ready?.message ?? '', /could not create its pod: .*forbidden.*quota/i);
    const took = toMillis(failed.status?.completionTime)! - toMillis(created.metadata.creationTimestamp)!;
    assert.ok(took < DEADLINE_MS + 10_000, `failed ${took} ms after its creation`);
    const event = await waitForEvent(client, ns, 'VolumeBackup', 'refused-backup', 'DeadlineExceeded');
    assert.equal(event.type, 'Warning');
  });

  it('a backup claim the API server refuses fails the backup at once, with the refusal', async () => {
    await sourceClaim('quota-src');
    // No more storage may be requested in the namespace: the backup claim is refused.
    await createQuota(client, ns, 'no-storage', { 'requests.storage': '1' });
    await volumeBackup('quota-backup', 'quota-src');
    const failed = await waitForPhase('quota-backup', 'Failed', DEADLINE_MS / 2);
    const ready = condition(failed, 'Ready');
    assert.equal(ready?.reason, 'BackupFailed', 'failed for the refusal, not at the deadline');
    assert.match(ready?.message ?? '', /backup claim quota-backup-data refused: .*forbidden.*quota/i);
    const event = await waitForEvent(client, ns, 'VolumeBackup', 'quota-backup', 'BackupFailed');
    assert.equal(event.type, 'Warning');
  });
});

describe('a Machine in a namespace that enforces restricted', () => {
  let suite: MachineSuite | undefined;
  let client: KubeClient;
  let ns: string;
  let backupName = '';

  before(async () => {
    suite = await startMachineSuite('machine-psa-m', 4);
    ({ client, ns } = suite);
    await labelNamespace(client, ns, RESTRICTED);
  });
  after(() => stopMachineSuite(suite));

  /** One volume, and a privileged container, which `restricted` refuses. */
  const oneVolume = (restoreFrom?: { volumeBackup: string; volume: string }) => ({
    volumes: [{ name: 'data', size: '1Gi', mountPath: '/data', ...(restoreFrom ? { restoreFrom } : {}) }],
    securityContext: { privileged: true },
  });

  it("asking for a privileged container, waits with its PodMachine's PodRefused: not Failed, the claim made, no pod", async () => {
    await client.create(MACHINE, machine(ns, 'locked', oneVolume()));
    const m = await waitForMachine(
      client,
      ns,
      'locked',
      'InfrastructureReady=False with reason PodRefused, holding the backup finalizer',
      (x) =>
        condition(x, 'InfrastructureReady')?.reason === 'PodRefused' &&
        (x.metadata.finalizers ?? []).includes(VOLUME_BACKUP_FINALIZER),
    );
    assert.equal(m.status?.phase, 'Provisioning', 'transient: the PodMachine retries with backoff');
    assert.equal(m.status?.ready, false);
    assert.equal(condition(m, 'Ready')?.reason, 'PodRefused');
    assert.match(condition(m, 'Ready')?.message ?? '', PSA_REFUSAL);
    assert.deepEqual(
      m.status?.volumes?.map((v) => v.claimName),
      ['locked-data'],
      'the claim was made (claims are not subject to Pod Security)',
    );
    assert.equal((await pods(client, ns)).length, 0, 'no Machine pod');
    const event = await waitForEvent(client, ns, 'PodMachine', 'locked', 'PodRefused');
    assert.equal(event.type, 'Warning');
    assert.match(event.note ?? '', PSA_REFUSAL);
  });

  it('is backed up on deletion: the copy pods are admitted and the Machine goes', async () => {
    const m = await getMachine(client, ns, 'locked');
    assert.ok(m, 'the Machine of the previous test');
    await client.delete(MACHINE, ns, 'locked');
    await waitForGone(client, ns, 'locked', 90_000);
    const mine = (await backups(client, ns)).filter((b) => b.spec.machineUID === m.metadata.uid);
    assert.equal(mine.length, 1);
    const backup = mine[0]!;
    assert.equal(backup.status?.phase, 'Completed');
    assert.equal(backup.status?.attempts, 1, 'the first copy attempt succeeded');
    backupName = backup.metadata.name ?? '';
    const copies = (await jobs(client, ns)).filter((j) => controllerUid(j) === backup.metadata.uid);
    assert.equal(copies.length, 1);
    assert.ok(copies.every(isComplete));
    assert.equal(copies[0]?.spec?.template.spec?.securityContext?.runAsNonRoot, true);
  });

  it('a Machine restored there runs its restore Job, then waits on its refused pod the same way', async () => {
    assert.ok(backupName, 'needs the backup of the previous test');
    await client.create(
      MACHINE,
      machine(ns, 'restored', {
        ...oneVolume({ volumeBackup: backupName, volume: 'data' }),
        backup: { policy: 'None' },
      }),
    );
    const m = await waitForMachine(
      client,
      ns,
      'restored',
      'restored, then PodRefused',
      (x) => condition(x, 'InfrastructureReady')?.reason === 'PodRefused',
      90_000,
    );
    assert.equal(m.status?.phase, 'Provisioning');
    const pm = await getPodMachine(client, ns, 'restored');
    assert.equal(condition(pm, 'VolumesReady')?.status, 'True', 'the volume was restored first');
    const restore = (await jobs(client, ns)).find((j) => j.metadata?.name === 'restored-data-restore');
    assert.ok(restore && isComplete(restore), 'the restore Job ran under restricted');
    const claim = (await claims(client, ns)).find((c) => c.metadata?.name === 'restored-data');
    assert.equal(claim?.metadata?.annotations?.[RESTORED_FROM_ANNOTATION], `${backupName}/data`);
  });
});
