// Restoring a StatefulSetMachine's volume from a VolumeBackup, against the local control plane with
// the provider running as its own process. The VolumeBackups are made by hand (object, backup claim,
// status through the status subresource), as the VolumeBackup controller would leave them, or by the
// VolumeBackup controller itself. kwok runs no container: its Stage gives copy pods the mover's report
// of two equal (empty) trees, so a restore is checked against what its backup recorded as on a node.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { testClient } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import type { OperatorProcess } from '../../../e2e/support/operator-process.ts';
import { sleep, waitFor } from '../../../e2e/support/wait.ts';
import { STATEFULSET_MACHINE } from '../../../examples/statefulset-provider/src/api.ts';
import {
  manifestValue,
  RESTORED_FROM_ANNOTATION,
  RESTORED_MANIFEST_ANNOTATION,
} from '../../../examples/statefulset-provider/src/names.ts';
import { STATEFUL_SET } from '../../../examples/statefulset-provider/src/statefulset.ts';
import {
  STOP_REQUESTED_ANNOTATION,
  VOLUME_BACKUP,
  type VolumeBackup,
  type VolumeManifest,
} from '../../../src/apis/index.ts';
import { registerVolumeBackupController } from '../../../src/controllers/volumebackup/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { startTestManager } from '../../support/manager.ts';
import { OPERATOR_DEFAULTS } from '../../support/operator-options.ts';
import {
  getLive,
  installProvider,
  readyReason,
  startProvider,
  statefulSetMachine,
  waitForMachine,
} from './provider.ts';

/** How long a restore Job may run in this file: long enough for kwok, short enough to see one fail. */
const RESTORE_DEADLINE_S = 20;

describe('StatefulSetMachine provider: restore from a VolumeBackup', () => {
  let client: KubeClient;
  let ns = '';
  let provider: OperatorProcess | undefined;

  before(async () => {
    await installProvider(14);
    client = await testClient();
    ns = await createNamespace(client, 'stsm-restore');
    provider = await startProvider(ns, ['--restore-deadline', `${RESTORE_DEADLINE_S}s`]);
  });
  after(async () => {
    await provider?.stop();
    if (ns) await deleteNamespace(client, ns);
  });

  /**
   * A backup claim, as the VolumeBackup controller leaves one: Bound (unless `storageClassName` makes
   * it unbindable, then Pending).
   */
  async function backupClaim(name: string, storageClassName?: string): Promise<void> {
    await client.create<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: ns },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
        ...(storageClassName ? { storageClassName } : {}),
      },
    });
    if (storageClassName) return;
    await waitFor(
      `backup claim ${name} to be Bound`,
      async () =>
        (await client.get<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim, ns, name)).status
          ?.phase === 'Bound',
      { timeoutMs: 30_000 },
    );
  }

  /**
   * A Completed standalone VolumeBackup of one volume `data`, held in `claim`, with the verified
   * `manifest` the VolumeBackup controller records (none: a backup from before copies were verified).
   */
  async function completedBackup(name: string, claim: string, manifest?: VolumeManifest): Promise<void> {
    await client.create<VolumeBackup>(VOLUME_BACKUP, {
      apiVersion: VOLUME_BACKUP.apiVersion,
      kind: VOLUME_BACKUP.kind,
      metadata: { name, namespace: ns },
      spec: { volumes: [{ name: 'data', claimName: 'data-gone-0' }] },
    });
    await client.patch(VOLUME_BACKUP, {
      namespace: ns,
      name,
      patchType: 'merge',
      subresource: 'status',
      body: {
        status: {
          phase: 'Completed',
          volumes: [{ name: 'data', backupClaimName: claim, ...(manifest ? { manifest } : {}) }],
        },
      },
    });
  }

  /** The events.k8s.io Events about StatefulSetMachine `name` with this reason. */
  async function events(name: string, reason: string): Promise<{ note?: string; type?: string }[]> {
    const list = await client.list<
      KubeObject & {
        reason?: string;
        note?: string;
        type?: string;
        regarding?: { kind?: string; name?: string };
      }
    >(CoreTypes.Event, { namespace: ns });
    return list.items.filter(
      (e) => e.regarding?.kind === 'StatefulSetMachine' && e.regarding.name === name && e.reason === reason,
    );
  }

  const restoring = (backup: string) => ({
    volumes: [
      {
        name: 'data',
        size: '1Gi',
        mountPath: '/data',
        restoreFrom: { volumeBackup: backup, volume: 'data' },
      },
      { name: 'logs', size: '512Mi', mountPath: '/logs' },
    ],
  });

  it('waits with a clear condition for a VolumeBackup that does not exist yet, then restores into the claim before the StatefulSet', async () => {
    await client.create(STATEFULSET_MACHINE, statefulSetMachine(ns, 'beta', restoring('earlier')));
    const waiting = await waitForMachine(
      client,
      ns,
      'beta',
      'waiting for the backup',
      (m) => readyReason(m) === 'BackupNotFound',
    );
    assert.equal(waiting.status?.phase, 'Pending');
    assert.equal(waiting.status?.failureReason, undefined, 'waiting is not a failure');
    assert.match(
      waiting.status?.conditions?.[0]?.message ?? '',
      /VolumeBackup earlier, which does not exist/,
    );
    await sleep(1000);
    assert.equal(
      await getLive(() => client.get(STATEFUL_SET, ns, 'beta')),
      undefined,
      'no StatefulSet while waiting',
    );

    // A backup from before copies were verified: it records no manifest to check against.
    await backupClaim('earlier-data');
    await completedBackup('earlier', 'earlier-data');
    const m = await waitForMachine(client, ns, 'beta', 'ready', (x) => x.status?.ready === true);
    assert.deepEqual(
      m.status?.volumes?.map((v) => [v.claimName, v.phase]),
      [
        ['data-beta-0', 'Bound'],
        ['logs-beta-0', 'Bound'],
      ],
    );

    const restored = await client.get<V1PersistentVolumeClaim>(
      CoreTypes.PersistentVolumeClaim,
      ns,
      'data-beta-0',
    );
    assert.equal(restored.metadata?.annotations?.[RESTORED_FROM_ANNOTATION], 'earlier/data');
    assert.equal(restored.metadata?.ownerReferences?.find((r) => r.controller)?.uid, m.metadata.uid);
    // The StatefulSet's pod took the restored claim as its own.
    const pod = await client.get<V1Pod>(CoreTypes.Pod, ns, 'beta-0');
    assert.ok(pod.spec?.volumes?.some((v) => v.persistentVolumeClaim?.claimName === 'data-beta-0'));
    // The restore Job is gone once the claim is marked, so nothing else holds the claims.
    assert.equal(await getLive(() => client.get<V1Job>(CoreTypes.Job, ns, 'beta-data-restore')), undefined);
    const [completed] = await waitFor('a RestoreCompleted Event', async () => {
      const found = await events('beta', 'RestoreCompleted');
      return found.length > 0 ? found : undefined;
    });
    assert.match(completed?.note ?? '', /not against a recorded manifest/);
  });

  it("the VolumeBackup controller, unchanged, backs up a stopped StatefulSetMachine's claims, and the backup restores into a new one, verified against the manifest it recorded", async () => {
    await client.create(
      STATEFULSET_MACHINE,
      statefulSetMachine(ns, 'source', { volumes: [{ name: 'data', size: '1Gi', mountPath: '/data' }] }),
    );
    await waitForMachine(client, ns, 'source', 'ready', (m) => m.status?.ready === true);
    await client.patch(STATEFULSET_MACHINE, {
      namespace: ns,
      name: 'source',
      patchType: 'merge',
      body: { metadata: { annotations: { [STOP_REQUESTED_ANNOTATION]: 'true' } } },
    });
    const stopped = await waitForMachine(client, ns, 'source', 'stopped', (m) => m.status?.stopped === true);

    // What the machine-backup controller records from a Machine's status.volumes, which the Machine
    // copies from its provider's: here straight from the provider's.
    const operator = await startTestManager([ns], (m) =>
      registerVolumeBackupController(m, OPERATOR_DEFAULTS),
    );
    try {
      await client.create<VolumeBackup>(VOLUME_BACKUP, {
        apiVersion: VOLUME_BACKUP.apiVersion,
        kind: VOLUME_BACKUP.kind,
        metadata: { name: 'source-backup', namespace: ns },
        // Standalone: only the operator records a backup of a Machine.
        spec: {
          volumes: (stopped.status?.volumes ?? []).map((v) => ({ name: v.name, claimName: v.claimName })),
        },
      });
      await waitFor(
        'VolumeBackup source-backup to complete',
        async () =>
          (await client.get<VolumeBackup>(VOLUME_BACKUP, ns, 'source-backup')).status?.phase === 'Completed',
        { timeoutMs: 90_000 },
      );
    } finally {
      await operator.stop();
    }

    await client.create(STATEFULSET_MACHINE, statefulSetMachine(ns, 'copy', restoring('source-backup')));
    await waitForMachine(client, ns, 'copy', 'ready', (m) => m.status?.ready === true);
    const restored = await client.get<V1PersistentVolumeClaim>(
      CoreTypes.PersistentVolumeClaim,
      ns,
      'data-copy-0',
    );
    assert.equal(restored.metadata?.annotations?.[RESTORED_FROM_ANNOTATION], 'source-backup/data');
    const backup = await client.get<VolumeBackup>(VOLUME_BACKUP, ns, 'source-backup');
    const manifest = backup.status?.volumes?.find((v) => v.name === 'data')?.manifest;
    assert.ok(manifest, 'the VolumeBackup controller recorded what it copied');
    assert.equal(restored.metadata?.annotations?.[RESTORED_MANIFEST_ANNOTATION], manifestValue(manifest));
    const [completed] = await events('copy', 'RestoreCompleted');
    assert.match(completed?.note ?? '', /, verified: .*, as the backup recorded/);
  });

  it("a restored tree that differs from the backup's manifest: RestoreVerificationFailed, the claim unmarked, no StatefulSet", async () => {
    await backupClaim('other-data');
    // What no kwok copy reports: one file of five bytes.
    await completedBackup('other', 'other-data', { files: 1, bytes: 5, digest: `sha256:${'f'.repeat(64)}` });
    await client.create(STATEFULSET_MACHINE, statefulSetMachine(ns, 'delta', restoring('other')));
    const m = await waitForMachine(
      client,
      ns,
      'delta',
      'failed',
      (x) => x.status?.phase === 'Failed',
      60_000,
    );
    assert.equal(m.status?.failureReason, 'RestoreVerificationFailed');
    assert.match(
      m.status?.failureMessage ?? '',
      /does not match the backup: expected 1 files, 5 bytes, sha256:f{64}, found \d+ files, \d+ bytes, sha256:[0-9a-f]{64}/,
    );
    const claim = await client.get<V1PersistentVolumeClaim>(
      CoreTypes.PersistentVolumeClaim,
      ns,
      'data-delta-0',
    );
    assert.equal(claim.metadata?.annotations?.[RESTORED_FROM_ANNOTATION], undefined, 'not marked restored');
    assert.ok(
      await getLive(() => client.get<V1Job>(CoreTypes.Job, ns, 'delta-data-restore')),
      'the Job is kept',
    );
    assert.equal(await getLive(() => client.get(STATEFUL_SET, ns, 'delta')), undefined);
  });

  it('a backup claim that is not Bound fails the restore at once (BackupClaimLost), before any copy', async () => {
    await backupClaim('stuck-data', 'no-such-class');
    await completedBackup('stuck', 'stuck-data');
    await client.create(STATEFULSET_MACHINE, statefulSetMachine(ns, 'epsilon', restoring('stuck')));
    const m = await waitForMachine(
      client,
      ns,
      'epsilon',
      'failed',
      (x) => x.status?.phase === 'Failed',
      30_000,
    );
    assert.equal(m.status?.failureReason, 'BackupClaimLost');
    assert.match(
      m.status?.failureMessage ?? '',
      /backup claim stuck-data of volume data is Pending, not Bound/,
    );
    assert.equal(
      await getLive(() => client.get<V1Job>(CoreTypes.Job, ns, 'epsilon-data-restore')),
      undefined,
    );
    assert.equal(await getLive(() => client.get(STATEFUL_SET, ns, 'epsilon')), undefined);
  });

  it('a restore that fails is a terminal failure, and no StatefulSet is made', async () => {
    // No pod may run here any more: the copy never starts and its Job hits its deadline. (The dry
    // run of a root copy pod is refused too, by the quota: no reason to give up root for that.)
    await client.create<KubeObject & { spec: { hard: Record<string, string> } }>(CoreTypes.ResourceQuota, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'no-pods', namespace: ns },
      spec: { hard: { pods: '0' } },
    });
    await backupClaim('late-data');
    await completedBackup('late', 'late-data');
    await client.create(STATEFULSET_MACHINE, statefulSetMachine(ns, 'gamma', restoring('late')));
    await waitForMachine(client, ns, 'gamma', 'restoring', (m) => readyReason(m) === 'Restoring');
    const m = await waitForMachine(
      client,
      ns,
      'gamma',
      'failed',
      (x) => x.status?.phase === 'Failed',
      (RESTORE_DEADLINE_S + 60) * 1000,
    );
    assert.equal(m.status?.failureReason, 'RestoreFailed');
    assert.match(m.status?.failureMessage ?? '', /restore Job gamma-data-restore failed \(DeadlineExceeded/);
    const job = await client.get<V1Job>(CoreTypes.Job, ns, 'gamma-data-restore');
    assert.equal(
      job.spec?.template.spec?.securityContext?.runAsUser,
      0,
      'a quota is no Pod Security refusal',
    );
    assert.equal(await getLive(() => client.get(STATEFUL_SET, ns, 'gamma')), undefined);
  });
});
