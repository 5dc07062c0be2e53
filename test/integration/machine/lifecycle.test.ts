// A Machine's life against the local control plane, with the Machine, PodMachine and VolumeBackup
// controllers in-process: an inline Machine realized as a PodMachine (claims and pod), deleted with a
// backup through the contract's stop handshake, restored into a new Machine, a failed pod; and a
// Machine that references a PodMachine made by hand, which it adopts, backs up and deletes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  ADOPTABLE_BY_ANNOTATION,
  MACHINE,
  MACHINE_FINALIZER,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  POD_MACHINE,
  STOP_REQUESTED_ANNOTATION,
  VOLUME_BACKUP_FINALIZER,
} from '../../../src/apis/index.ts';
import { RESTORED_FROM_ANNOTATION } from '../../../src/controllers/podmachine/names.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { toMillis } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import {
  backups,
  claims,
  condition,
  controllerUid,
  getMachine,
  getPodMachine,
  isComplete,
  isRunningAndReady,
  jobs,
  type MachineSuite,
  machine,
  pods,
  startMachineSuite,
  stopMachineSuite,
  TWO_VOLUMES,
  waitForEvent,
  waitForGone,
  waitForMachine,
} from './helpers.ts';

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

  it('runs a Machine with two volumes as a PodMachine: claims bound, pod Ready, Running and Ready', async () => {
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
    assert.equal(condition(m, 'InfrastructureReady')?.status, 'True');
    assert.equal(condition(m, 'InfrastructureReady')?.reason, 'PodReady', "the PodMachine's reason");
    assert.equal(
      condition(m, 'InfrastructureReady')?.message,
      'PodMachine alpha: pod alpha is running and ready',
    );
    assert.ok(m.metadata.finalizers?.includes(MACHINE_FINALIZER), 'the Machine finalizer added');
    assert.ok(m.metadata.finalizers?.includes(VOLUME_BACKUP_FINALIZER), 'backup finalizer added');
    assert.deepEqual(m.status?.infrastructureRef, {
      apiVersion: POD_MACHINE.apiVersion,
      kind: POD_MACHINE.kind,
      name: 'alpha',
    });
    assert.equal(m.status?.providerID, `pod://${ns}/alpha`);
    assert.equal(m.spec.infrastructureRef, undefined, "the Machine's spec is not written");

    // The PodMachine of the Machine's name, controlled by the Machine, made from its inline fields.
    const pm = await getPodMachine(client, ns, 'alpha');
    assert.ok(pm, 'a PodMachine of the Machine name');
    assert.equal(controllerUid(pm), m.metadata.uid, 'controlled by the Machine');
    assert.equal(pm.metadata.labels?.[MANAGED_BY_LABEL], MANAGED_BY_VALUE);
    assert.deepEqual(pm.spec, { image: 'registry.k8s.io/pause:3.10', volumes: TWO_VOLUMES });
    assert.equal(condition(pm, 'VolumesReady')?.status, 'True');

    // Its claims and pod are the PodMachine's, which the Machine controls.
    const pod = await client.get<V1Pod>(CoreTypes.Pod, ns, 'alpha');
    assert.equal(controllerUid(pod), pm.metadata.uid);
    assert.deepEqual(
      pod.spec?.volumes?.flatMap((v) => v.persistentVolumeClaim?.claimName ?? []),
      ['alpha-data', 'alpha-logs'],
    );
    assert.deepEqual(
      m.status?.addresses,
      pod.status?.podIPs?.map((p) => ({ type: 'InternalIP', address: p.ip })),
      "the pod's IPs, copied through the PodMachine",
    );
    const mine = (await claims(client, ns)).filter((c) => c.metadata?.name?.startsWith('alpha-'));
    assert.equal(mine.length, 2);
    for (const claim of mine) assert.equal(controllerUid(claim), pm.metadata.uid);

    // Events are recorded in the background: one may land just after the status it reports.
    for (const reason of ['InfrastructureCreated', 'Running']) {
      await waitForEvent(client, ns, 'Machine', 'alpha', reason);
    }
    for (const reason of ['ClaimCreated', 'PodCreated', 'Running']) {
      await waitForEvent(client, ns, 'PodMachine', 'alpha', reason);
    }
    console.log(`  Machine Running and Ready in ${Date.now() - started} ms`);
  });

  it('deletes it: pod first, then a VolumeBackup that completes, then the PodMachine and its claims, then the Machine', async () => {
    const started = Date.now();
    const before = await getMachine(client, ns, 'alpha');
    const capacity = new Map(
      (await claims(client, ns)).map((c) => [c.metadata?.name, c.status?.capacity?.storage]),
    );
    await client.delete(MACHINE, ns, 'alpha');
    // Poll: VolumeBackups first, then pods, so a pod seen alongside a VolumeBackup certainly
    // existed after that VolumeBackup was created; the Machine before its PodMachine, so a PodMachine
    // seen after the Machine was gone certainly outlived it.
    const timeline: Record<string, number> = {};
    const phases = new Set<string>();
    let podOutlivedBackupCreation = false;
    let podMachineOutlivedMachine = false;
    let podMachineGoneBeforeBackup = false;
    let stopRequested = false;
    await waitFor(
      'the Machine to be gone',
      async () => {
        const backupList = await backups(client, ns);
        const podList = await pods(client, ns);
        const m = await getMachine(client, ns, 'alpha');
        const pm = await getPodMachine(client, ns, 'alpha');
        const now = Date.now() - started;
        if (m?.status?.phase) phases.add(m.status.phase);
        if (pm?.metadata.annotations?.[STOP_REQUESTED_ANNOTATION] === 'true') stopRequested = true;
        const podExists = podList.some((p) => p.metadata?.name === 'alpha');
        if (!podExists) timeline.podGone ??= now;
        if (backupList.length > 0) {
          timeline.backupSeen ??= now;
          if (podExists) podOutlivedBackupCreation = true;
        }
        const completed = backupList[0]?.status?.phase === 'Completed';
        if (completed) timeline.backupCompleted ??= now;
        if (!pm) {
          timeline.podMachineGone ??= now;
          if (!completed) podMachineGoneBeforeBackup = true;
        }
        if (!m) {
          timeline.machineGone ??= now;
          if (pm) podMachineOutlivedMachine = true;
        }
        return m === undefined;
      },
      { timeoutMs: 90_000, intervalMs: 50 },
    );
    console.log(
      `  deletion timeline (ms): ${JSON.stringify(timeline)}; phases seen: ${[...phases].join(', ')}`,
    );
    assert.ok(stopRequested, 'the PodMachine was asked to stop');
    assert.equal(podOutlivedBackupCreation, false, 'the pod was gone before the VolumeBackup was created');
    assert.equal(podMachineGoneBeforeBackup, false, 'the PodMachine (with its claims) outlived the backup');
    assert.equal(podMachineOutlivedMachine, false, 'the Machine went only after its PodMachine');

    const list = await backups(client, ns);
    assert.equal(list.length, 1, 'exactly one VolumeBackup');
    const backup = list[0]!;
    backupName = backup.metadata.name ?? '';
    assert.equal(backup.spec.machineName, 'alpha');
    assert.equal(backup.spec.machineUID, before?.metadata.uid);
    assert.deepEqual(backup.spec.volumes, [
      { name: 'data', claimName: 'alpha-data' },
      { name: 'logs', claimName: 'alpha-logs' },
    ]);
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

    for (const reason of [
      'StopRequested',
      'Stopped',
      'BackupStarted',
      'BackupCompleted',
      'FinalizerRemoved',
      'InfrastructureDeleted',
    ]) {
      await waitForEvent(client, ns, 'Machine', 'alpha', reason);
    }
    for (const reason of ['Stopping', 'Stopped']) {
      await waitForEvent(client, ns, 'PodMachine', 'alpha', reason);
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
    await waitForMachine(client, ns, 'beta', 'Running and Ready', isRunningAndReady, 90_000);
    const pm = await getPodMachine(client, ns, 'beta');
    assert.ok(pm, 'a PodMachine made for it');
    assert.deepEqual(
      pm.spec.volumes?.map((v) => v.restoreFrom),
      [
        { volumeBackup: backupName, volume: 'data' },
        { volumeBackup: backupName, volume: 'logs' },
      ],
      'restoreFrom copied into the PodMachine',
    );
    const pod = await client.get<V1Pod>(CoreTypes.Pod, ns, 'beta');
    const podCreated = toMillis(pod.metadata?.creationTimestamp)!;
    const restoreJobs = (await jobs(client, ns)).filter((j) => controllerUid(j) === pm.metadata.uid);
    assert.deepEqual(
      restoreJobs.map((j) => j.metadata?.name).sort(),
      ['beta-data-restore', 'beta-logs-restore'],
      "one restore Job per volume, the PodMachine's",
    );
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
    await waitForEvent(client, ns, 'PodMachine', 'beta', 'RestoreStarted');
    await waitForEvent(client, ns, 'PodMachine', 'beta', 'RestoreCompleted');
    console.log(`  restored Machine Running in ${Date.now() - started} ms`);
  });

  it("reports the PodMachine's terminal failure when the pod fails, and recovers once the pod is deleted", async () => {
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
    const infrastructure = condition(failed, 'InfrastructureReady');
    assert.equal(infrastructure?.reason, 'InfrastructureFailed');
    assert.match(
      infrastructure?.message ?? '',
      /^PodMachine beta failed: PodFailed: pod beta has failed: .*Evicted.*low on resource/,
    );
    const ready = condition(failed, 'Ready');
    assert.equal(ready?.reason, 'InfrastructureFailed', 'Ready says what the Machine waits for');
    assert.equal(ready?.message, infrastructure?.message);
    const pm = await getPodMachine(client, ns, 'beta');
    assert.equal(pm?.status?.failureReason, 'PodFailed');
    assert.equal((await waitForEvent(client, ns, 'Machine', 'beta', 'InfrastructureFailed')).type, 'Warning');
    assert.equal((await waitForEvent(client, ns, 'PodMachine', 'beta', 'PodFailed')).type, 'Warning');

    const oldUid = (await client.get<V1Pod>(CoreTypes.Pod, ns, 'beta')).metadata?.uid;
    await client.delete(CoreTypes.Pod, ns, 'beta', { gracePeriodSeconds: 0 });
    const again = await waitForMachine(client, ns, 'beta', 'Running again', isRunningAndReady);
    const pod = await client.get<V1Pod>(CoreTypes.Pod, ns, 'beta');
    assert.notEqual(pod.metadata?.uid, oldUid, 'a new pod');
    assert.equal(condition(again, 'InfrastructureReady')?.reason, 'PodReady');
    assert.equal((await getPodMachine(client, ns, 'beta'))?.status?.failureReason, undefined, 'cleared');
  });

  it('a Machine deleted while its restore waits (its claim never binds): the restore Job is deleted, the Machine goes', async () => {
    assert.ok(backupName, 'needs the backup of an earlier test');
    await client.create(
      MACHINE,
      machine(ns, 'stalled', {
        backup: { policy: 'None' },
        volumes: [
          {
            name: 'data',
            size: '1Gi',
            mountPath: '/data',
            storageClassName: 'no-such-class',
            restoreFrom: { volumeBackup: backupName, volume: 'data' },
          },
        ],
      }),
    );
    const restore = await waitFor('the restore Job, its pod waiting for the claim', async () =>
      (await jobs(client, ns)).find((j) => j.metadata?.name === 'stalled-data-restore'),
    );
    assert.ok(!isComplete(restore), 'the copy cannot run: its claim never binds');
    await client.delete(MACHINE, ns, 'stalled');
    await waitForGone(client, ns, 'stalled', 90_000);
    await waitFor('the restore Job to be deleted', async () =>
      (await jobs(client, ns)).every((j) => j.metadata?.name !== 'stalled-data-restore'),
    );
  });

  it('lets a Machine with backup policy None go at once, without a backup', async () => {
    await client.create(MACHINE, machine(ns, 'gamma', { backup: { policy: 'None' } }));
    const m = await waitForMachine(client, ns, 'gamma', 'Running and Ready', isRunningAndReady);
    assert.deepEqual(m.metadata.finalizers, [MACHINE_FINALIZER], 'no backup finalizer');
    const before = (await backups(client, ns)).length;
    await client.delete(MACHINE, ns, 'gamma');
    await waitForGone(client, ns, 'gamma');
    assert.equal(await getPodMachine(client, ns, 'gamma'), undefined, 'its PodMachine went first');
    await waitFor('its claims to be collected', async () =>
      (await claims(client, ns)).every((c) => !c.metadata?.name?.startsWith('gamma-')),
    );
    assert.equal((await backups(client, ns)).length, before, 'no VolumeBackup made');
  });

  it('adopts a PodMachine made by hand that it references, and backs it up and deletes it on deletion', async () => {
    const started = Date.now();
    await client.create(POD_MACHINE, {
      apiVersion: POD_MACHINE.apiVersion,
      kind: POD_MACHINE.kind,
      metadata: { name: 'delta', namespace: ns, annotations: { [ADOPTABLE_BY_ANNOTATION]: 'delta-machine' } },
      spec: {
        image: 'registry.k8s.io/pause:3.10',
        volumes: [{ name: 'data', size: '1Gi', mountPath: '/data' }],
      },
    });
    await client.create(MACHINE, {
      apiVersion: MACHINE.apiVersion,
      kind: MACHINE.kind,
      metadata: { name: 'delta-machine', namespace: ns },
      spec: {
        infrastructureRef: { apiVersion: POD_MACHINE.apiVersion, kind: POD_MACHINE.kind, name: 'delta' },
      },
    });
    const m = await waitForMachine(client, ns, 'delta-machine', 'Running and Ready', isRunningAndReady);
    assert.deepEqual(
      m.status?.volumes?.map((v) => [v.name, v.claimName, v.phase]),
      [['data', 'delta-data', 'Bound']],
    );
    assert.equal(m.status?.providerID, `pod://${ns}/delta`);
    const pm = await getPodMachine(client, ns, 'delta');
    assert.equal(controllerUid(pm), m.metadata.uid, 'adopted: the Machine is its controller');
    await waitForEvent(client, ns, 'Machine', 'delta-machine', 'InfrastructureOwned');

    await client.delete(MACHINE, ns, 'delta-machine');
    await waitForGone(client, ns, 'delta-machine', 90_000);
    assert.equal(await getPodMachine(client, ns, 'delta'), undefined, 'the PodMachine went first');
    const mine = (await backups(client, ns)).filter((b) => b.spec.machineUID === m.metadata.uid);
    assert.equal(mine.length, 1, 'one VolumeBackup');
    assert.equal(mine[0]?.status?.phase, 'Completed');
    assert.deepEqual(
      mine[0]?.spec.volumes,
      [{ name: 'data', claimName: 'delta-data' }],
      'from status.volumes',
    );
    await waitFor("the garbage collector to delete the PodMachine's claim", async () =>
      (await claims(client, ns)).every((c) => c.metadata?.name !== 'delta-data'),
    );
    console.log(`  referenced PodMachine adopted, run, backed up and deleted in ${Date.now() - started} ms`);
  });
});
