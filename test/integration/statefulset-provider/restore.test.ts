// Restoring a StatefulSetMachine's volume from a VolumeBackup, against the local control plane with
// the provider running as its own process. The VolumeBackup is made by hand (object, backup claim,
// status through the status subresource), as the VolumeBackup controller would leave it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { STATEFULSET_MACHINE } from '../../../examples/statefulset-provider/src/api.ts';
import { RESTORED_FROM_ANNOTATION } from '../../../examples/statefulset-provider/src/names.ts';
import { STATEFUL_SET } from '../../../examples/statefulset-provider/src/statefulset.ts';
import { STOP_REQUESTED_ANNOTATION, VOLUME_BACKUP, type VolumeBackup } from '../../../src/apis/index.ts';
import { registerVolumeBackupJobsController } from '../../../src/controllers/volumebackup/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { testClient } from '../../support/cluster.ts';
import { startTestManager } from '../../support/manager.ts';
import { createNamespace, deleteNamespace } from '../../support/namespace.ts';
import { OPERATOR_DEFAULTS } from '../../support/operator-options.ts';
import type { OperatorProcess } from '../../support/operator-process.ts';
import { sleep, waitFor } from '../../support/wait.ts';
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

  /** A backup claim with data in it, as the VolumeBackup controller leaves one (`storageClassName` may make it unbindable). */
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
  }

  /** A Completed VolumeBackup of one volume `data`, held in `claim`. */
  async function completedBackup(name: string, claim: string): Promise<void> {
    await client.create<VolumeBackup>(VOLUME_BACKUP, {
      apiVersion: VOLUME_BACKUP.apiVersion,
      kind: VOLUME_BACKUP.kind,
      metadata: { name, namespace: ns },
      spec: {
        machineName: 'gone',
        machineUID: 'uid-of-a-gone-machine',
        volumes: [{ name: 'data', claimName: 'data-gone-0' }],
      },
    });
    await client.patch(VOLUME_BACKUP, {
      namespace: ns,
      name,
      patchType: 'merge',
      subresource: 'status',
      body: { status: { phase: 'Completed', volumes: [{ name: 'data', backupClaimName: claim }] } },
    });
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
  });

  it("the VolumeBackup controller, unchanged, backs up a stopped StatefulSetMachine's claims, and the backup restores into a new one", async () => {
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
      registerVolumeBackupJobsController(m, OPERATOR_DEFAULTS),
    );
    try {
      await client.create<VolumeBackup>(VOLUME_BACKUP, {
        apiVersion: VOLUME_BACKUP.apiVersion,
        kind: VOLUME_BACKUP.kind,
        metadata: { name: 'source-backup', namespace: ns },
        spec: {
          machineName: 'source',
          machineUID: stopped.metadata.uid ?? '',
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
  });

  it('a restore that fails is a terminal failure, and no StatefulSet is made', async () => {
    // A backup claim nothing can bind: the copy never starts and the Job hits its deadline.
    await backupClaim('stuck-data', 'no-such-class');
    await completedBackup('stuck', 'stuck-data');
    await client.create(STATEFULSET_MACHINE, statefulSetMachine(ns, 'gamma', restoring('stuck')));
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
    assert.equal(await getLive(() => client.get(STATEFUL_SET, ns, 'gamma')), undefined);
  });
});
