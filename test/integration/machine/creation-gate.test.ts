// A Machine with backup policy OnDelete gets nothing created (no PodMachine, so no claim or pod)
// before the VolumeBackup controller's finalizer is on it: a deletion in that window would otherwise
// lose its data without a backup. Only the Machine and PodMachine controllers run here, so the
// finalizer comes from the test. Then: what the API server refuses to the PodMachine (a quota) is
// transient, and the Machine says what it waits for.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readQueue, waitForQueue } from '../../../e2e/support/queue-metrics.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import { MACHINE, MACHINE_FINALIZER, POD_MACHINE, VOLUME_BACKUP_FINALIZER } from '../../../src/apis/index.ts';
import { CONTROLLER_NAME, registerMachineController } from '../../../src/controllers/machine/index.ts';
import { registerPodMachineController } from '../../../src/controllers/podmachine/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { addFinalizer } from '../../../src/runtime/write/finalizers.ts';
import { OPERATOR_DEFAULTS } from '../../support/operator-options.ts';
import { type OperatorSuite, startOperatorSuite } from '../../support/suite.ts';
import {
  claims,
  condition,
  createQuota,
  getMachine,
  getPodMachine,
  isRunningAndReady,
  machine,
  pods,
  prepareCluster,
  stopMachineSuite,
  waitForEvent,
  waitForMachine,
  watchCrdChanges,
} from './helpers.ts';

const PODMACHINES_CRD = `${POD_MACHINE.plural}.${POD_MACHINE.group}`;
const TOUCH_ANNOTATION = 'test.basicoperator.dev/touched-by';

/** Changes a CRD harmlessly (an annotation naming the test namespace, or its removal with `undefined`). */
const touchCrd = (client: KubeClient, name: string, value: string | undefined) =>
  client.patch(CoreTypes.CustomResourceDefinition, {
    namespace: undefined,
    name,
    patchType: 'merge',
    body: { metadata: { annotations: { [TOUCH_ANNOTATION]: value ?? null } } },
  });

describe('the Machine controller waits for the backup finalizer', () => {
  let suite: OperatorSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    await prepareCluster(10);
    suite = await startOperatorSuite('machine-gate', (m) => {
      registerMachineController(m);
      registerPodMachineController(m, OPERATOR_DEFAULTS);
    });
    ({ client, ns } = suite);
  });
  after(async () => {
    if (client) await touchCrd(client, PODMACHINES_CRD, undefined).catch(() => undefined);
    await stopMachineSuite(suite);
  });

  it('creates no PodMachine (no claim, no pod) for an OnDelete Machine until the finalizer is there, without looping', async () => {
    const metrics = suite!.manager.ports.metrics!;
    // After the caches synced (watchCrdChanges waits for them), so the controllers run: the reading
    // is taken before anything of this Machine, and the CRDs' initial list is no change.
    const crdChanges = await watchCrdChanges(suite!.manager, POD_MACHINE.group);
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
    assert.equal(condition(waiting, 'InfrastructureReady')?.reason, 'WaitingForBackupFinalizer');
    assert.match(condition(waiting, 'Ready')?.message ?? '', /infra\.basicoperator\.dev\/volume-backup/);
    assert.deepEqual(waiting.metadata.finalizers, [MACHINE_FINALIZER], 'its own finalizer first');
    assert.equal(waiting.status?.infrastructureRef, undefined, 'no provider object in use yet');

    // Meanwhile the CRD of its provider kind changes, as when another test file applies the CRDs.
    const seen = crdChanges.count;
    await touchCrd(client, PODMACHINES_CRD, ns);
    await waitFor('the manager to see the CRD change', () => crdChanges.count > seen);

    // Quiet while it waits, once the controller has reconciled the Machine to the end and has
    // nothing queued or running: nothing scheduled to come back (a requeue would be a loop), no
    // further writes to the Machine, nothing created. Two reconciles of its own: the creation, and
    // the update that added the Machine controller's own finalizer; and at most one for each change
    // of a CRD of the provider's group, which wakes every Machine of that group whoever made it
    // (here the one above; in a full run, other test files' CRD applies too).
    const settled = await waitForQueue(
      metrics,
      CONTROLLER_NAME,
      'the Machine taken in and nothing queued or running',
      (q) => q.adds > before.adds && q.depth === 0 && q.active === 0,
    );
    const woken = crdChanges.count;
    const reading = `${JSON.stringify(settled)}, ${woken} CRD changes of ${POD_MACHINE.group} seen`;
    assert.equal(settled.retries, before.retries, `no requeue while waiting: ${reading}`);
    assert.ok(settled.adds - before.adds <= 2 + woken, `(almost) no reconciles: ${reading}`);
    const still = await getMachine(client, ns, 'gated');
    assert.equal(still?.metadata.resourceVersion, waiting.metadata.resourceVersion, 'no status writes');
    assert.equal(await getPodMachine(client, ns, 'gated'), undefined, 'no PodMachine');
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
    assert.equal(condition(running, 'Ready')?.reason, 'InfrastructureReady');
    assert.equal(condition(running, 'InfrastructureReady')?.reason, 'PodReady');
    assert.equal(running.status?.infrastructureRef?.kind, POD_MACHINE.kind);
    assert.deepEqual((await claims(client, ns)).map((c) => c.metadata?.name).sort(), [
      'gated-data',
      'gated-logs',
    ]);
  });

  it('reports a pod the API server refuses (here: a quota) as transient, and recovers once it is lifted', async () => {
    await createQuota(client, ns, 'no-pods', { pods: '0' });
    await client.create(MACHINE, machine(ns, 'refused', { backup: { policy: 'None' } }));
    const waiting = await waitForMachine(
      client,
      ns,
      'refused',
      'InfrastructureReady=False with reason PodRefused',
      (m) => condition(m, 'InfrastructureReady')?.reason === 'PodRefused',
    );
    // Not a terminal failure: the PodMachine retries with backoff, and the Machine waits for it.
    assert.equal(waiting.status?.phase, 'Provisioning');
    assert.equal(condition(waiting, 'Ready')?.reason, 'PodRefused', 'Ready says what the Machine waits for');
    assert.match(
      condition(waiting, 'Ready')?.message ?? '',
      /^PodMachine refused: the API server refused pod refused: .*forbidden.*quota.*retrying with backoff/i,
    );
    assert.equal((await getPodMachine(client, ns, 'refused'))?.status?.failureReason, undefined);
    const event = await waitForEvent(client, ns, 'PodMachine', 'refused', 'PodRefused');
    assert.equal(event.type, 'Warning');

    await client.delete(CoreTypes.ResourceQuota, ns, 'no-pods');
    await waitForMachine(client, ns, 'refused', 'Running and Ready', isRunningAndReady, 120_000);
  });

  it('reports a claim the API server refuses as transient, creates no pod without it, and recovers', async () => {
    await createQuota(client, ns, 'no-claims', { persistentvolumeclaims: '0' });
    await client.create(MACHINE, machine(ns, 'noclaim', { backup: { policy: 'None' } }));
    const waiting = await waitForMachine(
      client,
      ns,
      'noclaim',
      'InfrastructureReady=False with reason ClaimRefused',
      (m) => condition(m, 'InfrastructureReady')?.reason === 'ClaimRefused',
    );
    assert.equal(waiting.status?.phase, 'Provisioning');
    assert.equal(condition(waiting, 'Ready')?.reason, 'ClaimRefused');
    assert.match(
      condition(waiting, 'Ready')?.message ?? '',
      /^PodMachine noclaim: the API server refused claim noclaim-data: .*forbidden.*quota/i,
    );
    const pm = await getPodMachine(client, ns, 'noclaim');
    assert.equal(condition(pm, 'VolumesReady')?.reason, 'ClaimRefused');
    assert.equal(pm?.status?.failureReason, undefined);
    assert.ok(
      !(await pods(client, ns)).some((p) => p.metadata?.name === 'noclaim'),
      'no pod without its claims',
    );
    assert.equal((await waitForEvent(client, ns, 'PodMachine', 'noclaim', 'ClaimRefused')).type, 'Warning');

    await client.delete(CoreTypes.ResourceQuota, ns, 'no-claims');
    await waitForMachine(client, ns, 'noclaim', 'Running and Ready', isRunningAndReady, 120_000);
  });
});
