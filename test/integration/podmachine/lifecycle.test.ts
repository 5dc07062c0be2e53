// A PodMachine's life against the local control plane, with its controller in-process: Ready with
// its claims Bound and its pod Ready (kwok), the contract's status fields, the stop handshake, the
// garbage collector taking the children on deletion, a restore from a Completed VolumeBackup checked
// against the manifest it recorded (kwok's Stage plays the mover), and one whose backup claim is gone.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  isViolation,
  POD_MACHINE,
  readInfrastructure,
  STOP_REQUESTED_ANNOTATION,
  VOLUME_BACKUP,
  type VolumeBackup,
} from '../../../src/apis/index.ts';
import {
  manifestValue,
  RESTORED_FROM_ANNOTATION,
  RESTORED_MANIFEST_ANNOTATION,
} from '../../../src/controllers/podmachine/names.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { toMillis } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { type OperatorSuite, stopOperatorSuite } from '../../support/suite.ts';
import {
  claims,
  condition,
  getPodMachine,
  isReady,
  jobs,
  podMachine,
  pods,
  startPodMachineSuite,
  waitForEvent,
  waitForPodMachine,
} from './helpers.ts';

describe('PodMachine lifecycle', () => {
  let suite: OperatorSuite | undefined;
  let client: KubeClient;
  let ns: string;
  let backupName = '';

  before(async () => {
    suite = await startPodMachineSuite('podmachine-life', 12, { withBackups: true });
    ({ client, ns } = suite);
  });
  after(() => stopOperatorSuite(suite));

  it('gets Ready: claims Bound, pod Ready, and every contract field', async () => {
    const started = Date.now();
    await client.create(POD_MACHINE, podMachine(ns, 'alpha'));
    const pm = await waitForPodMachine(client, ns, 'alpha', 'Ready', isReady);
    const pod = await client.get<V1Pod>(CoreTypes.Pod, ns, 'alpha');
    assert.equal(pm.status?.phase, 'Running');
    assert.equal(pm.status?.providerID, `pod://${ns}/alpha`);
    assert.ok(pod.status?.podIPs?.length, 'kwok gives the pod an IP');
    assert.deepEqual(
      pm.status?.addresses,
      pod.status?.podIPs?.map((p) => ({ type: 'InternalIP', address: p.ip })),
    );
    assert.deepEqual(pm.status?.volumes, [
      { name: 'data', claimName: 'alpha-data', phase: 'Bound' },
      { name: 'logs', claimName: 'alpha-logs', phase: 'Bound' },
    ]);
    assert.equal(pm.status?.stopped, false);
    assert.equal(pm.status?.failureReason, undefined);
    assert.equal(condition(pm, 'VolumesReady')?.status, 'True');

    const view = readInfrastructure({ metadata: pm.metadata, status: pm.status });
    assert.ok(!isViolation(view), 'the status reads through the contract');
    assert.equal(view.ready, true);
    assert.equal(view.stopped, false);
    assert.equal(view.failure, undefined);

    assert.equal(pod.metadata?.ownerReferences?.[0]?.uid, pm.metadata.uid);
    assert.equal(pod.metadata?.ownerReferences?.[0]?.controller, true);
    assert.deepEqual(
      pod.spec?.containers.map((c) => [c.name, c.image]),
      [['machine', 'registry.k8s.io/pause:3.10']],
    );
    assert.deepEqual(
      pod.spec?.volumes?.flatMap((v) => v.persistentVolumeClaim?.claimName ?? []),
      ['alpha-data', 'alpha-logs'],
    );
    for (const claim of (await claims(client, ns)).filter((c) => c.metadata?.name?.startsWith('alpha-'))) {
      assert.equal(claim.metadata?.ownerReferences?.[0]?.uid, pm.metadata.uid);
      assert.equal(claim.metadata?.labels?.['app.kubernetes.io/managed-by'], 'basic-operator');
      assert.equal(claim.metadata?.labels?.['infra.basicoperator.dev/podmachine'], 'alpha');
    }
    for (const reason of ['ClaimCreated', 'PodCreated', 'Running'])
      await waitForEvent(client, ns, 'alpha', reason);
    console.log(`  PodMachine Ready in ${Date.now() - started} ms`);
  });

  it('stops on request: the pod goes, the claims stay, then stopped: true', async () => {
    const started = Date.now();
    await client.patch(POD_MACHINE, {
      namespace: ns,
      name: 'alpha',
      patchType: 'merge',
      body: { metadata: { annotations: { [STOP_REQUESTED_ANNOTATION]: 'true' } } },
    });
    const stopped = await waitForPodMachine(
      client,
      ns,
      'alpha',
      'stopped',
      (pm) => pm.status?.stopped === true,
    );
    assert.equal(
      (await pods(client, ns)).some((p) => p.metadata?.name === 'alpha'),
      false,
      'stopped only once the pod is gone',
    );
    assert.equal(stopped.status?.phase, 'Stopped');
    assert.equal(stopped.status?.ready, false);
    assert.equal(condition(stopped, 'Ready')?.reason, 'Stopped');
    assert.deepEqual(stopped.status?.addresses, []);
    const names = (await claims(client, ns)).map((c) => c.metadata?.name);
    assert.ok(names.includes('alpha-data') && names.includes('alpha-logs'), 'the claims are kept');
    await waitForEvent(client, ns, 'alpha', 'Stopped');
    console.log(`  PodMachine stopped in ${Date.now() - started} ms`);
  });

  it('keeps no pod while stopped, and the claims can be backed up (a standalone VolumeBackup completes)', async () => {
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(
      (await pods(client, ns)).some((p) => p.metadata?.name === 'alpha'),
      false,
      'never started again',
    );
    const pm = await getPodMachine(client, ns, 'alpha');
    backupName = 'alpha-backup';
    await client.create<VolumeBackup>(VOLUME_BACKUP, {
      apiVersion: VOLUME_BACKUP.apiVersion,
      kind: VOLUME_BACKUP.kind,
      metadata: { name: backupName, namespace: ns },
      // Standalone (no machineName): only the operator records backups of a Machine.
      spec: {
        volumes: (pm?.status?.volumes ?? []).map((v) => ({ name: v.name, claimName: v.claimName })),
      },
    });
    await waitFor(
      `VolumeBackup ${backupName} to complete`,
      async () =>
        (await client.get<VolumeBackup>(VOLUME_BACKUP, ns, backupName)).status?.phase === 'Completed',
      { timeoutMs: 90_000 },
    );
  });

  it('is deleted: the garbage collector takes the claims with it (the backup claims stay)', async () => {
    await client.delete(POD_MACHINE, ns, 'alpha');
    await waitFor(
      'the PodMachine and its claims to be gone',
      async () =>
        (await getPodMachine(client, ns, 'alpha')) === undefined &&
        (await claims(client, ns)).every(
          (c) => !['alpha-data', 'alpha-logs'].includes(c.metadata?.name ?? ''),
        ),
      { timeoutMs: 60_000 },
    );
    const left = (await claims(client, ns)).map((c) => c.metadata?.name);
    assert.ok(
      left.includes('alpha-backup-data') && left.includes('alpha-backup-logs'),
      'owned by the backup',
    );
  });

  it('restores from a Completed VolumeBackup: the pod starts only after every claim was filled', async () => {
    assert.ok(backupName, 'needs the backup of the earlier test');
    const started = Date.now();
    await client.create(
      POD_MACHINE,
      podMachine(ns, 'beta', {
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
    const pm = await waitForPodMachine(client, ns, 'beta', 'Ready', isReady, 90_000);
    const pod = await client.get<V1Pod>(CoreTypes.Pod, ns, 'beta');
    const podCreated = toMillis(pod.metadata?.creationTimestamp)!;
    const restoreJobs = (await jobs(client, ns)).filter((j) =>
      j.metadata?.ownerReferences?.some((r) => r.uid === pm.metadata.uid),
    );
    assert.deepEqual(restoreJobs.map((j) => j.metadata?.name).sort(), [
      'beta-data-restore',
      'beta-logs-restore',
    ]);
    for (const job of restoreJobs) {
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
    // Verified: the copy pod's report (kwok plays the mover) equals what the backup recorded.
    const backup = await client.get<VolumeBackup>(VOLUME_BACKUP, ns, backupName);
    for (const volume of ['data', 'logs']) {
      const manifest = backup.status?.volumes?.find((v) => v.name === volume)?.manifest;
      assert.ok(manifest, `the backup recorded a manifest of ${volume}`);
      const claim = restored.find((c) => c.metadata?.name === `beta-${volume}`);
      assert.equal(claim?.metadata?.annotations?.[RESTORED_MANIFEST_ANNOTATION], manifestValue(manifest));
      const job = restoreJobs.find((j) => j.metadata?.name === `beta-${volume}-restore`);
      const args = job?.spec?.template.spec?.containers[0]?.args ?? [];
      assert.equal(
        args[args.indexOf('--expect') + 1],
        manifestValue(manifest),
        'the mover was told what to find',
      );
      assert.equal(job?.spec?.template.spec?.securityContext?.runAsUser, 0, 'root: the namespace allows it');
    }
    await waitFor(
      'the restore Jobs to keep no pod',
      async () =>
        !(await pods(client, ns)).some(
          (p) => p.metadata?.name?.startsWith('beta-') && p.metadata.name !== 'beta',
        ),
      { timeoutMs: 30_000 },
    );
    await waitForEvent(client, ns, 'beta', 'RestoreStarted');
    const completed = await waitForEvent(client, ns, 'beta', 'RestoreCompleted');
    assert.match(
      completed.note ?? '',
      /verified: 0 files, 0 bytes, sha256:[0-9a-f]{64}, as the backup recorded/,
    );
    console.log(`  restored PodMachine Ready in ${Date.now() - started} ms`);
  });
  it('a restore whose backup claim is gone fails at once with BackupClaimLost, naming it; no restore Job', async () => {
    assert.ok(backupName, 'needs the backup of the earlier test');
    const backup = await client.get<VolumeBackup>(VOLUME_BACKUP, ns, backupName);
    const lost = backup.status?.volumes?.find((v) => v.name === 'logs')?.backupClaimName ?? '';
    // Deleted (or, while its VolumeBackup holds it, Terminating): its bytes cannot be restored.
    await client.delete(CoreTypes.PersistentVolumeClaim, ns, lost);
    const started = Date.now();
    await client.create(
      POD_MACHINE,
      podMachine(ns, 'gamma', {
        volumes: [
          {
            name: 'logs',
            size: '512Mi',
            mountPath: '/var/log/app',
            restoreFrom: { volumeBackup: backupName, volume: 'logs' },
          },
        ],
      }),
    );
    const pm = await waitForPodMachine(
      client,
      ns,
      'gamma',
      'Failed with BackupClaimLost',
      (p) => p.status?.failureReason === 'BackupClaimLost',
      30_000,
    );
    assert.equal(pm.status?.phase, 'Failed');
    assert.match(
      pm.status?.failureMessage ?? '',
      new RegExp(`backup claim ${lost} of volume logs (does not exist|is being deleted)`),
    );
    assert.equal(
      (await jobs(client, ns)).some((j) => j.metadata?.name === 'gamma-logs-restore'),
      false,
      'no copy from a claim that is going',
    );
    assert.equal(
      (await pods(client, ns)).some((p) => p.metadata?.name === 'gamma'),
      false,
    );
    console.log(`  BackupClaimLost ${Date.now() - started} ms after the PodMachine was created`);
  });
});
