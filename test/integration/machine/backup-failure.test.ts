// A backup whose copy Jobs always fail: retried up to the limit, then Failed; the Machine stays
// until a person sets the skip-backup annotation.
//
// How a Job fails on kwok: kwok completes every Job pod it runs, so these pods must never run. The
// Machine's volumes use a StorageClass that does not exist, so its claims (and the backup claims,
// which copy the class) never bind and the copy pods stay unscheduled. The test then sets each copy
// pod's status to Failed through the status subresource (no kubelet owns an unscheduled pod), and the
// Job controller fails the Job (backoffLimit 0).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { readQueue, waitForQueueSettled } from '../../../e2e/support/queue-metrics.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  MACHINE,
  SKIP_BACKUP_ANNOTATION,
  VOLUME_BACKUP,
  VOLUME_BACKUP_FINALIZER,
} from '../../../src/apis/index.ts';
import { CONTROLLER_NAME as MACHINE_BACKUP_CONTROLLER } from '../../../src/controllers/machinebackup/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import {
  backups,
  condition,
  getMachine,
  getPodMachine,
  type MachineSuite,
  machine,
  pods,
  startMachineSuite,
  stopMachineSuite,
  waitForEvent,
  waitForGone,
  waitForMachine,
} from './helpers.ts';

const MAX_ATTEMPTS = 2;

/** Two volumes: one used up its attempts; the other may be behind (each retries on its own). */
function assertAttempts(attempts: number | undefined, message = 'attempts over both volumes'): void {
  assert.ok(
    attempts !== undefined && attempts >= MAX_ATTEMPTS && attempts <= MAX_ATTEMPTS * 2,
    `${message}: ${attempts}`,
  );
}

describe('a backup that always fails', () => {
  let suite: MachineSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    suite = await startMachineSuite('machine-fail', 10, {
      maxCopyAttempts: MAX_ATTEMPTS,
      retryBackoffMs: 500,
    });
    ({ client, ns } = suite);
  });
  after(() => stopMachineSuite(suite));

  /** Fails every unscheduled copy pod, as a crashing copy would; stops when `signal` aborts. */
  async function failCopyPods(signal: AbortSignal): Promise<number> {
    const failed = new Set<string>();
    while (!signal.aborted) {
      for (const pod of await pods(client, ns)) {
        const name = pod.metadata?.name ?? '';
        if (pod.metadata?.labels?.['infra.basicoperator.dev/role'] !== 'backup') continue;
        if (pod.status?.phase !== 'Pending' || failed.has(name)) continue;
        await client
          .patch<V1Pod>(CoreTypes.Pod, {
            namespace: ns,
            name,
            patchType: 'merge',
            body: {
              status: { phase: 'Failed', reason: 'CopyCrashed', message: 'cp: read error: I/O error' },
            },
            subresource: 'status',
          })
          .then(() => failed.add(name))
          .catch(() => undefined);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return failed.size;
  }

  it('retries, fails with the reason, keeps the Machine; a new backup on request; the skip annotation lets it go', async () => {
    const started = Date.now();
    const volumes = [
      { name: 'data', size: '1Gi', mountPath: '/data', storageClassName: 'no-such-class' },
      { name: 'logs', size: '1Gi', mountPath: '/logs', storageClassName: 'no-such-class' },
    ];
    await client.create(MACHINE, machine(ns, 'doomed', { volumes }));
    // Its PodMachine waits for the claims to bind, and the Machine says so.
    const m = await waitForMachine(
      client,
      ns,
      'doomed',
      'Provisioning with the finalizer, waiting for its claims',
      (x) =>
        x.status?.phase === 'Provisioning' &&
        condition(x, 'InfrastructureReady')?.reason === 'VolumesNotReady' &&
        (x.metadata.finalizers ?? []).includes(VOLUME_BACKUP_FINALIZER),
    );
    assert.match(
      condition(m, 'Ready')?.message ?? '',
      /^PodMachine doomed: waiting for claims to bind: doomed-data \(Pending\), doomed-logs \(Pending\)/,
    );
    assert.equal(
      condition(await getPodMachine(client, ns, 'doomed'), 'VolumesReady')?.reason,
      'ClaimsPending',
    );

    const stopFailing = new AbortController();
    const failing = failCopyPods(stopFailing.signal);
    await client.delete(MACHINE, ns, 'doomed');
    const backup = await waitFor(
      'the VolumeBackup to fail',
      async () => (await backups(client, ns)).find((b) => b.status?.phase === 'Failed'),
      { timeoutMs: 60_000 },
    );
    stopFailing.abort();
    const failedPods = await failing;
    console.log(`  failed ${failedPods} copy pods; VolumeBackup Failed after ${Date.now() - started} ms`);

    // Failed as soon as one volume used up its attempts: the other may be an attempt behind.
    assertAttempts(backup.status?.attempts);
    const ready = condition(backup, 'Ready');
    assert.equal(ready?.reason, 'BackupFailed');
    assert.match(ready?.message ?? '', new RegExp(`${MAX_ATTEMPTS} of ${MAX_ATTEMPTS} copy attempts failed`));
    assert.match(ready?.message ?? '', /BackoffLimitExceeded/);
    await waitForEvent(client, ns, 'VolumeBackup', backup.metadata.name ?? '', 'CopyRetried');

    // The Machine stays, and says why.
    const held = await waitForMachine(
      client,
      ns,
      'doomed',
      'the VolumeBackup condition to report the failure',
      (x) => condition(x, 'VolumeBackup')?.reason === 'BackupFailed',
    );
    assert.equal(held.status?.phase, 'Stopped');
    assert.match(condition(held, 'VolumeBackup')?.message ?? '', /skip-backup/);
    assert.equal(condition(held, 'Ready')?.reason, 'Stopped', "the Machine controller's conditions are kept");
    const warning = await waitForEvent(client, ns, 'Machine', 'doomed', 'BackupFailed');
    assert.equal(warning.type, 'Warning');
    // Kept, not just not released yet: a reconcile queued after the failure was on record runs to
    // the end before the Machine is looked at.
    const metrics = suite!.manager.ports.metrics!;
    const queue = await readQueue(metrics, MACHINE_BACKUP_CONTROLLER);
    await client.patch(MACHINE, {
      namespace: ns,
      name: 'doomed',
      patchType: 'merge',
      body: { metadata: { annotations: { 'test.basicoperator.dev/touched': 'after-the-failure' } } },
    });
    await waitForQueueSettled(metrics, MACHINE_BACKUP_CONTROLLER, queue);
    const kept = await getMachine(client, ns, 'doomed');
    assert.ok(
      kept?.metadata.finalizers?.includes(VOLUME_BACKUP_FINALIZER),
      'still there, holding the finalizer, after the failure',
    );

    // Deleting the failed VolumeBackup starts the backup over, under the same name.
    const stopFailingAgain = new AbortController();
    const failingAgain = failCopyPods(stopFailingAgain.signal);
    await client.delete(VOLUME_BACKUP, ns, backup.metadata.name ?? '');
    const retried = await waitFor(
      'a new VolumeBackup of the same name to fail',
      async () =>
        (await backups(client, ns)).find(
          (b) => b.metadata.uid !== backup.metadata.uid && b.status?.phase === 'Failed',
        ),
      { timeoutMs: 60_000 },
    );
    stopFailingAgain.abort();
    await failingAgain;
    assert.equal(retried.metadata.name, backup.metadata.name);
    assertAttempts(retried.status?.attempts, 'a fresh set of attempts');
    console.log(`  retried backup Failed again after ${Date.now() - started} ms`);

    // A person lets it go without a backup.
    await client.patch(MACHINE, {
      namespace: ns,
      name: 'doomed',
      patchType: 'merge',
      body: {
        metadata: { annotations: { [SKIP_BACKUP_ANNOTATION]: 'true' } },
      },
    });
    await waitForGone(client, ns, 'doomed');
    assert.equal(await getPodMachine(client, ns, 'doomed'), undefined, 'its PodMachine went first');
    const skipped = (await backups(client, ns)).find((b) => b.metadata.uid === retried.metadata.uid);
    assert.equal(skipped?.status?.phase, 'Failed');
    assert.equal(condition(skipped, 'Skipped')?.status, 'True');
    assert.match(condition(skipped, 'Skipped')?.message ?? '', /without waiting for this backup/);
    assert.equal(condition(skipped, 'Ready')?.reason, 'BackupFailed', 'the failure is still on record');
    // Events are recorded in the background, so this one may land just after the Machine is gone.
    await waitForEvent(client, ns, 'Machine', 'doomed', 'FinalizerRemoved');
  });

  it('a skip set before the deletion lets the Machine go without any VolumeBackup', async () => {
    const volumes = [{ name: 'data', size: '1Gi', mountPath: '/data', storageClassName: 'no-such-class' }];
    await client.create(MACHINE, {
      ...machine(ns, 'skipped', { volumes }),
      metadata: { name: 'skipped', namespace: ns, annotations: { [SKIP_BACKUP_ANNOTATION]: 'true' } },
    });
    const m = await waitForMachine(client, ns, 'skipped', 'holding the finalizer', (x) =>
      (x.metadata.finalizers ?? []).includes(VOLUME_BACKUP_FINALIZER),
    );
    await client.delete(MACHINE, ns, 'skipped');
    await waitForGone(client, ns, 'skipped');
    assert.equal((await backups(client, ns)).filter((b) => b.spec.machineUID === m.metadata.uid).length, 0);
  });
});
