// A Machine with backup policy OnDelete gets nothing created before the VolumeBackup controller's
// finalizer is on it: a deletion in that window would otherwise lose its data without a backup.
// Only the Machine controller runs here, so the finalizer comes from the test.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MACHINE, VOLUME_BACKUP_FINALIZER } from '../../../src/apis/index.ts';
import { CONTROLLER_NAME, registerMachineController } from '../../../src/controllers/machine/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { addFinalizer } from '../../../src/runtime/write/finalizers.ts';
import { readQueue, waitForQueue } from '../../support/queue-metrics.ts';
import { type OperatorSuite, startOperatorSuite } from '../../support/suite.ts';
import {
  claims,
  condition,
  createQuota,
  getMachine,
  isRunningAndReady,
  machine,
  pods,
  prepareCluster,
  stopMachineSuite,
  waitForEvent,
  waitForMachine,
} from './helpers.ts';

describe('the Machine controller waits for the backup finalizer', () => {
  let suite: OperatorSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    await prepareCluster(10);
    suite = await startOperatorSuite('machine-gate', (m) => registerMachineController(m));
    ({ client, ns } = suite);
  });
  after(() => stopMachineSuite(suite));

  it('creates no claim and no pod for an OnDelete Machine until the finalizer is there, without looping', async () => {
    const metrics = suite!.manager.ports.metrics!;
    const before = await readQueue(metrics, CONTROLLER_NAME);
    await client.create(MACHINE, machine(ns, 'gated'));
    const waiting = await waitForMachine(
      client,
      ns,
      'gated',
      'Ready=False with reason WaitingForBackupFinalizer',
      (m) => condition(m, 'Ready')?.reason === 'WaitingForBackupFinalizer',
      30_000,
    );
    assert.equal(waiting.status?.phase, 'Pending');
    assert.equal(condition(waiting, 'Ready')?.status, 'False');
    assert.match(condition(waiting, 'Ready')?.message ?? '', /infra\.basicoperator\.dev\/volume-backup/);

    // Quiet while it waits, once the controller has reconciled the Machine to the end and has
    // nothing queued or running: nothing scheduled to come back (a requeue would be a loop), no
    // further writes to the Machine, nothing created.
    const settled = await waitForQueue(
      metrics,
      CONTROLLER_NAME,
      'the Machine taken in and nothing queued or running',
      (q) => q.adds > before.adds && q.depth === 0 && q.active === 0,
    );
    assert.equal(settled.retries, before.retries, `no requeue while waiting: ${JSON.stringify(settled)}`);
    assert.ok(settled.adds - before.adds <= 2, `(almost) no reconciles: ${JSON.stringify(settled)}`);
    const still = await getMachine(client, ns, 'gated');
    assert.equal(still?.metadata.resourceVersion, waiting.metadata.resourceVersion, 'no status writes');
    assert.deepEqual(
      (await claims(client, ns)).map((c) => c.metadata?.name),
      [],
    );
    assert.deepEqual(
      (await pods(client, ns)).map((p) => p.metadata?.name),
      [],
    );

    // The finalizer arrives (here by hand): the Machine controller is woken and proceeds.
    await addFinalizer(client, MACHINE, still!, VOLUME_BACKUP_FINALIZER);
    const running = await waitForMachine(client, ns, 'gated', 'Running and Ready', isRunningAndReady);
    assert.equal(condition(running, 'Ready')?.reason, 'PodReady');
    assert.deepEqual((await claims(client, ns)).map((c) => c.metadata?.name).sort(), [
      'gated-data',
      'gated-logs',
    ]);
  });

  it('reports a pod the API server refuses (here: a quota), and recovers once it is lifted', async () => {
    await createQuota(client, ns, 'no-pods', { pods: '0' });
    await client.create(MACHINE, machine(ns, 'refused', { backup: { policy: 'None' } }));
    const failed = await waitForMachine(
      client,
      ns,
      'refused',
      'Failed with reason PodRefused',
      (m) => condition(m, 'Ready')?.reason === 'PodRefused',
    );
    assert.equal(failed.status?.phase, 'Failed');
    assert.match(condition(failed, 'Ready')?.message ?? '', /forbidden.*quota/i);
    const event = await waitForEvent(client, ns, 'Machine', 'refused', 'PodRefused');
    assert.equal(event.type, 'Warning');

    await client.delete(CoreTypes.ResourceQuota, ns, 'no-pods');
    await waitForMachine(client, ns, 'refused', 'Running and Ready', isRunningAndReady, 120_000);
  });

  it('reports a claim the API server refuses, creates no pod without it, and recovers', async () => {
    await createQuota(client, ns, 'no-claims', { persistentvolumeclaims: '0' });
    await client.create(MACHINE, machine(ns, 'noclaim', { backup: { policy: 'None' } }));
    const failed = await waitForMachine(
      client,
      ns,
      'noclaim',
      'Failed with reason ClaimRefused',
      (m) => condition(m, 'Ready')?.reason === 'ClaimRefused',
    );
    assert.equal(failed.status?.phase, 'Failed');
    assert.equal(condition(failed, 'VolumesReady')?.reason, 'ClaimRefused');
    assert.match(
      condition(failed, 'Ready')?.message ?? '',
      /refused claim noclaim-data: .*forbidden.*quota/i,
    );
    assert.ok(
      !(await pods(client, ns)).some((p) => p.metadata?.name === 'noclaim'),
      'no pod without its claims',
    );
    await waitForEvent(client, ns, 'Machine', 'noclaim', 'ClaimRefused');

    await client.delete(CoreTypes.ResourceQuota, ns, 'no-claims');
    await waitForMachine(client, ns, 'noclaim', 'Running and Ready', isRunningAndReady, 120_000);
  });
});
