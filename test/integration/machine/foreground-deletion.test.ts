// `kubectl delete --cascade=foreground` makes the garbage collector delete a Machine's PodMachine,
// and with it the claims, while the backup finalizer still holds the Machine: there is nothing left
// to copy. The backup must say so at once, not wait out its deadline, and skipping it must still let
// the Machine go (its provider object is gone already).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../../../e2e/support/wait.ts';
import { MACHINE, SKIP_BACKUP_ANNOTATION, VOLUME_BACKUP_FINALIZER } from '../../../src/apis/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import {
  backups,
  condition,
  getPodMachine,
  isRunningAndReady,
  type MachineSuite,
  machine,
  startMachineSuite,
  stopMachineSuite,
  waitForEvent,
  waitForGone,
  waitForMachine,
} from './helpers.ts';

describe('a Machine deleted with foreground cascading', () => {
  let suite: MachineSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    suite = await startMachineSuite('machine-fg', 6);
    ({ client, ns } = suite);
  });
  after(() => stopMachineSuite(suite));

  it('fails its backup at once, saying its claims are being deleted, and keeps the Machine', async () => {
    await client.create(MACHINE, machine(ns, 'fg'));
    const m = await waitForMachine(
      client,
      ns,
      'fg',
      'Running with the finalizer',
      (x) => isRunningAndReady(x) && (x.metadata.finalizers ?? []).includes(VOLUME_BACKUP_FINALIZER),
    );
    const started = Date.now();
    await client.delete(MACHINE, ns, 'fg', { propagationPolicy: 'Foreground' });
    const failed = await waitFor(
      'the VolumeBackup to fail',
      async () =>
        (await backups(client, ns)).find(
          (b) => b.spec.machineUID === m.metadata.uid && b.status?.phase === 'Failed',
        ),
      { timeoutMs: 60_000 },
    );
    console.log(`  VolumeBackup Failed ${Date.now() - started} ms after the deletion`);
    const ready = condition(failed, 'Ready');
    assert.equal(ready?.reason, 'BackupFailed');
    assert.match(ready?.message ?? '', /claim fg-(data|logs) (is being deleted|not found)/);
    assert.match(ready?.message ?? '', /foreground/);
    const held = await waitForMachine(
      client,
      ns,
      'fg',
      'BackupFailed on the Machine',
      (x) => condition(x, 'VolumeBackup')?.reason === 'BackupFailed',
    );
    assert.ok(held.metadata.deletionTimestamp);
    await waitForEvent(client, ns, 'VolumeBackup', failed.metadata.name ?? '', 'BackupFailed');
    await waitFor(
      'the garbage collector to delete the PodMachine',
      async () => (await getPodMachine(client, ns, 'fg')) === undefined,
    );

    // A person lets it go without the backup: nothing is left for the Machine controller to stop.
    await client.patch(MACHINE, {
      namespace: ns,
      name: 'fg',
      patchType: 'merge',
      body: { metadata: { annotations: { [SKIP_BACKUP_ANNOTATION]: 'true' } } },
    });
    await waitForGone(client, ns, 'fg');
  });
});
