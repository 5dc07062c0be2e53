// A Machine's life against the local control plane: create, delete with a backup, restore, pod failure.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { MACHINE, VOLUME_BACKUP_FINALIZER } from '../../../src/apis/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { toMillis } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { waitFor } from '../../support/wait.ts';
import {
  backups,
  claims,
  condition,
  getMachine,
  isComplete,
  isRunningAndReady,
  jobs,
  type MachineSuite,
  machine,
  pods,
  startMachineSuite,
  stopMachineSuite,
  waitForEvent,
  waitForGone,
  waitForMachine,
} from './helpers.ts';

/** What the PodMachine controller marks a restored claim with (until this suite runs on PodMachines). */
const RESTORED_FROM_ANNOTATION = 'infra.basicoperator.dev/restored-from';

describe('Machine lifecycle with backups', () => {
  let suite: MachineSuite | undefined;
  let client: KubeClient;
  let ns: string;
  let backupName = '';

  before(async () => {
    suite = await startMachineSuite('machine-life', 30);
    ({ client, ns } = suite);
  });
  after(() => stopMachineSuite(suite));

  it('runs a Machine with two volumes: claims bound, pod Ready, Running and Ready', async () => {
    const started = Date.now();
    await client.create(MACHINE, machine(ns, 'alpha'));
    const m = await waitForMachine(client, ns, 'alpha', 'Running and Ready', isRunningAndReady);
    assert.equal(m.status?.observedGeneration, m.metadata.generation);
    assert.deepEqual(
      m.status?.volumes?.map((v) => [v.name, v.claimName, v.phase]),
      [
        ['data', 'alpha-data', 'Bound'],
        ['logs', 'alpha-logs', 'Bound'],
      ],
    );
    assert.equal(condition(m, 'Ready')?.status, 'True');
    assert.equal(condition(m, 'VolumesReady')?.status, 'True');
    assert.ok(m.metadata.finalizers?.includes(VOLUME_BACKUP_FINALIZER), 'backup finalizer added');

    const pod = await client.get<V1Pod>(CoreTypes.Pod, ns, 'alpha');
    assert.equal(pod.metadata?.ownerReferences?.[0]?.uid, m.metadata.uid);
    assert.deepEqual(
      pod.spec?.volumes?.flatMap((v) => v.persistentVolumeClaim?.claimName ?? []),
      ['alpha-data', 'alpha-logs'],
    );
    // Events are recorded in the background: one may land just after the status it reports.
    for (const reason of ['ClaimCreated', 'PodCreated', 'Running']) {
      await waitForEvent(client, ns, 'Machine', 'alpha', reason);
    }
    console.log(`  Machine Running and Ready in ${Date.now() - started} ms`);
  });

  it('deletes it: pod first, then a VolumeBackup that completes, then the Machine and its claims', async () => {
    const started = Date.now();
    const before = await getMachine(client, ns, 'alpha');
    const capacity = new Map(
      (await claims(client, ns)).map((c) => [c.metadata?.name, c.status?.capacity?.storage]),
    );
    await client.delete(MACHINE, ns, 'alpha');
    // Poll: VolumeBackups first, then pods, so a pod seen alongside a VolumeBackup certainly
    // existed after that VolumeBackup was created.
    const timeline: Record<string, number> = {};
    const phases = new Set<string>();
    let podOutlivedBackupCreation = false;
    await waitFor(
      'the Machine to be gone',
      async () => {
        const backupList = await backups(client, ns);
        const podList = await pods(client, ns);
        const m = await getMachine(client, ns, 'alpha');
        const now = Date.now() - started;
        if (m?.status?.phase) phases.add(m.status.phase);
        const podExists = podList.some((p) => p.metadata?.name === 'alpha');
        if (!podExists) timeline.podGone ??= now;
        if (backupList.length > 0) {
          timeline.backupSeen ??= now;
          if (podExists) podOutlivedBackupCreation = true;
        }
        if (backupList[0]?.status?.phase === 'Completed') timeline.backupCompleted ??= now;
        if (!m) timeline.machineGone ??= now;
        return m === undefined;
      },
      { timeoutMs: 90_000, intervalMs: 50 },
    );
    console.log(
      `  deletion timeline (ms): ${JSON.stringify(timeline)}; phases seen: ${[...phases].join(', ')}`,
    );
    assert.equal(podOutlivedBackupCreation, false, 'the pod was gone before the VolumeBackup was created');

    const list = await backups(client, ns);
    assert.equal(list.length, 1, 'exactly one VolumeBackup');
    const backup = list[0]!;
    backupName = backup.metadata.name ?? '';
    assert.equal(backup.spec.machineName, 'alpha');
    assert.equal(backup.spec.machineUID, before?.metadata.uid);
    assert.equal(backupName, `alpha-${before?.metadata.uid?.replace(/-/g, '').slice(0, 8)}`);
    assert.equal(backup.status?.phase, 'Completed');
    assert.equal(backup.status?.attempts, 2);
    assert.ok(backup.status?.completionTime);
    assert.equal(condition(backup, 'Ready')?.status, 'True');
    assert.equal(backup.metadata.ownerReferences, undefined, 'not owned by the Machine');

    await waitFor(
      "the garbage collector to delete the Machine's claims",
      async () => {
        const names = (await claims(client, ns)).map((c) => c.metadata?.name);
        return !names.includes('alpha-data') && !names.includes('alpha-logs');
      },
      { timeoutMs: 60_000 },
    );
    const left = await claims(client, ns);
    const backupClaims = backup.status?.volumes?.map((v) => v.backupClaimName) ?? [];
    assert.equal(backupClaims.length, 2);
    for (const name of backupClaims) {
      const claim = left.find((c) => c.metadata?.name === name);
      assert.ok(claim, `backup claim ${name} remains`);
      assert.equal(claim.metadata?.ownerReferences?.[0]?.uid, backup.metadata.uid);
      // As big as the source claim's provisioned capacity, not its (smaller) request.
      const source = backup.spec.volumes.find((v) => name.endsWith(`-${v.name}`))?.claimName;
      const sourceCapacity = capacity.get(source);
      assert.ok(sourceCapacity, `source claim ${source} reported a capacity`);
      assert.equal(claim.spec?.resources?.requests?.storage, sourceCapacity);
    }
    const copyJobs = (await jobs(client, ns)).filter((j) =>
      j.metadata?.ownerReferences?.some((r) => r.uid === backup.metadata.uid),
    );
    assert.equal(copyJobs.length, 2);
    assert.ok(copyJobs.every(isComplete));

    for (const reason of ['Stopping', 'Stopped', 'BackupStarted', 'BackupCompleted', 'FinalizerRemoved']) {
      await waitForEvent(client, ns, 'Machine', 'alpha', reason);
    }
    await waitForEvent(client, ns, 'VolumeBackup', backupName, 'BackupCompleted');
    console.log(`  Machine deleted with its backup in ${Date.now() - started} ms`);
  });

  it('restores: a Machine restoring from that backup starts only after its claims were filled', async () => {
    assert.ok(backupName, 'needs the backup of the previous test');
    const started = Date.now();
    await client.create(
      MACHINE,
      machine(ns, 'beta', {
        volumes: [
          {
            name: 'data',
            size: '1Gi',
            mountPath: '/data',
            restoreFrom: { volumeBackup: backupName, volume: 'data' },
          },
          {
            name: 'logs',
            size: '512Mi',
            mountPath: '/var/log/app',
            restoreFrom: { volumeBackup: backupName, volume: 'logs' },
          },
        ],
      }),
    );
    const m = await waitForMachine(client, ns, 'beta', 'Running and Ready', isRunningAndReady);
    const pod = await client.get<V1Pod>(CoreTypes.Pod, ns, 'beta');
    const podCreated = toMillis(pod.metadata?.creationTimestamp)!;
    const restoreJobs = (await jobs(client, ns)).filter((j) =>
      j.metadata?.ownerReferences?.some((r) => r.uid === m.metadata.uid),
    );
    assert.equal(restoreJobs.length, 2, 'one restore Job per volume');
    for (const job of restoreJobs) {
      assert.ok(isComplete(job), `${job.metadata?.name} complete`);
      const done = toMillis(job.status?.completionTime)!;
      assert.ok(done <= podCreated, `${job.metadata?.name} finished before the pod was created`);
      const source = job.spec?.template.spec?.volumes?.find((v) => v.name === 'source');
      assert.ok(source?.persistentVolumeClaim?.claimName?.startsWith(backupName));
    }
    const restored = (await claims(client, ns)).filter((c) => c.metadata?.name?.startsWith('beta-'));
    assert.deepEqual(restored.map((c) => c.metadata?.annotations?.[RESTORED_FROM_ANNOTATION]).sort(), [
      `${backupName}/data`,
      `${backupName}/logs`,
    ]);
    await waitForEvent(client, ns, 'Machine', 'beta', 'RestoreStarted');
    await waitForEvent(client, ns, 'Machine', 'beta', 'RestoreCompleted');
    console.log(`  restored Machine Running in ${Date.now() - started} ms`);
  });

  it('reports Failed with the reason when the pod fails, and recreates a pod that disappears', async () => {
    await client.patch(CoreTypes.Pod, {
      namespace: ns,
      name: 'beta',
      patchType: 'merge',
      body: {
        status: { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' },
      },
      subresource: 'status',
    });
    const failed = await waitForMachine(client, ns, 'beta', 'Failed', (m) => m.status?.phase === 'Failed');
    assert.equal(failed.status?.ready, false);
    const ready = condition(failed, 'Ready');
    assert.equal(ready?.reason, 'PodFailed');
    assert.match(ready?.message ?? '', /Evicted.*low on resource/);
    await waitForEvent(client, ns, 'Machine', 'beta', 'PodFailed');

    const oldUid = (await client.get<V1Pod>(CoreTypes.Pod, ns, 'beta')).metadata?.uid;
    await client.delete(CoreTypes.Pod, ns, 'beta', { gracePeriodSeconds: 0 });
    await waitForMachine(client, ns, 'beta', 'Running again', isRunningAndReady);
    const pod = await client.get<V1Pod>(CoreTypes.Pod, ns, 'beta');
    assert.notEqual(pod.metadata?.uid, oldUid, 'a new pod');
  });

  it('lets a Machine with backup policy None go at once, without a backup', async () => {
    await client.create(MACHINE, machine(ns, 'gamma', { backup: { policy: 'None' } }));
    const m = await waitForMachine(client, ns, 'gamma', 'Running and Ready', isRunningAndReady);
    assert.ok(!m.metadata.finalizers?.includes(VOLUME_BACKUP_FINALIZER), 'no backup finalizer');
    const before = (await backups(client, ns)).length;
    await client.delete(MACHINE, ns, 'gamma');
    await waitForGone(client, ns, 'gamma');
    await waitFor('its claims to be collected', async () =>
      (await claims(client, ns)).every((c) => !c.metadata?.name?.startsWith('gamma-')),
    );
    assert.equal((await backups(client, ns)).length, before, 'no VolumeBackup made');
  });
});
