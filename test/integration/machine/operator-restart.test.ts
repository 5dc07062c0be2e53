// SIGKILL the operator (a child process) at each step of a Machine's deletion; after a restart
// exactly one VolumeBackup exists, the PodMachine is gone and the Machine finishes deleting.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testClient, testCluster } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import type { OperatorProcess } from '../../../e2e/support/operator-process.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  MACHINE,
  MACHINE_FINALIZER,
  type Machine,
  STOP_REQUESTED_ANNOTATION,
  VOLUME_BACKUP_FINALIZER,
  type VolumeBackup,
} from '../../../src/apis/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import {
  backups,
  claims,
  getMachine,
  getPodMachine,
  isRunningAndReady,
  jobs,
  machine,
  prepareCluster,
  releaseMachines,
  waitForGone,
  waitForMachine,
} from './helpers.ts';
import { type ControllerName, startMachineOperator } from './operator.ts';

describe('killing the operator during a Machine deletion', () => {
  let client: KubeClient;
  let ns: string;
  let operator: OperatorProcess | undefined;

  before(async () => {
    await prepareCluster(30);
    client = await testClient();
    ns = await createNamespace(client, 'machine-kill');
  });
  after(async () => {
    await operator?.stop({ signal: 'SIGKILL' });
    await releaseMachines(client, ns);
    await deleteNamespace(client, ns);
  });

  /** Kills the running operator and starts a new one with `controllers` (default: all). */
  async function restart(controllers?: readonly ControllerName[]): Promise<void> {
    await operator?.stop({ signal: 'SIGKILL' });
    operator = await startMachineOperator((await testCluster()).kubeconfig, ns, controllers);
  }

  async function runningMachine(name: string): Promise<Machine> {
    await client.create(MACHINE, machine(ns, name));
    return waitForMachine(
      client,
      ns,
      name,
      'Running, Ready and holding the backup finalizer',
      (m) => isRunningAndReady(m) && (m.metadata.finalizers ?? []).includes(VOLUME_BACKUP_FINALIZER),
    );
  }

  async function backupsOf(m: Machine): Promise<VolumeBackup[]> {
    return (await backups(client, ns)).filter((b) => b.spec.machineUID === m.metadata.uid);
  }

  /**
   * Until the operator's VolumeBackup for `m` exists and the Machine's status names its uid, the
   * operator's proof that it is its own. A kill between its create and that record leaves one the
   * operator cannot prove is its own (BackupConflict, by design: test/unit/machinebackup/plan.test.ts):
   * the scenarios here kill after the record.
   */
  async function recorded(m: Machine): Promise<void> {
    const name = m.metadata.name ?? '';
    await waitFor(
      `the VolumeBackup of ${name} to be created and recorded on it`,
      async () => {
        const [backup] = await backupsOf(m);
        const record = (await getMachine(client, ns, name))?.status?.volumeBackup;
        return backup !== undefined && record?.uid === backup.metadata.uid;
      },
      { intervalMs: 10 },
    );
  }

  /** The end state every scenario must reach after the last restart. */
  async function assertFinished(m: Machine): Promise<void> {
    const name = m.metadata.name ?? '';
    await waitForGone(client, ns, name, 90_000);
    assert.equal(await getPodMachine(client, ns, name), undefined, 'the PodMachine went before the Machine');
    const list = await backupsOf(m);
    assert.equal(list.length, 1, 'exactly one VolumeBackup');
    const backup = list[0]!;
    assert.equal(backup.status?.phase, 'Completed');
    const copyJobs = (await jobs(client, ns)).filter((j) =>
      j.metadata?.ownerReferences?.some((r) => r.uid === backup.metadata.uid),
    );
    assert.equal(
      copyJobs.length,
      2,
      `one copy Job per volume, none doubled: ${copyJobs.map((j) => j.metadata?.name)}`,
    );
    assert.equal(backup.status?.attempts, 2);
    await waitFor(
      `the claims of ${name} to be collected`,
      async () => (await claims(client, ns)).every((c) => !c.metadata?.name?.startsWith(`${name}-data`)),
      { timeoutMs: 90_000 },
    );
  }

  it('before the backup exists: killed once the Machine stopped, the restart records the backup', async () => {
    const started = Date.now();
    await restart();
    const m = await runningMachine('kill-before');
    // Only the Machine and PodMachine controllers run while the deletion starts: the pod stops, no
    // backup is made.
    await restart(['machine', 'podmachine']);
    await client.delete(MACHINE, ns, 'kill-before');
    await waitForMachine(client, ns, 'kill-before', 'Stopped', (x) => x.status?.phase === 'Stopped');
    assert.equal((await backupsOf(m)).length, 0, 'no VolumeBackup yet');
    assert.equal((await getPodMachine(client, ns, 'kill-before'))?.status?.stopped, true);
    await restart();
    await assertFinished(m);
    console.log(`  finished in ${Date.now() - started} ms`);
  });

  it('while a copy Job runs: killed as soon as a copy Job appears, the restart finishes the same backup', async () => {
    const started = Date.now();
    await restart();
    const m = await runningMachine('kill-during');
    await client.delete(MACHINE, ns, 'kill-during');
    await waitFor(
      'a copy Job',
      async () => (await jobs(client, ns)).some((j) => j.metadata?.name?.startsWith('kill-during-')),
      { intervalMs: 10 },
    );
    await recorded(m);
    await operator?.stop({ signal: 'SIGKILL' });
    const atKill = await backupsOf(m);
    console.log(`  at the kill: VolumeBackup phase ${atKill[0]?.status?.phase ?? '(no status yet)'}`);
    assert.equal(atKill.length, 1);
    assert.notEqual(atKill[0]?.status?.phase, 'Completed', 'killed before the backup completed');
    assert.ok(await getMachine(client, ns, 'kill-during'), 'the Machine waits while the operator is down');
    await restart();
    await assertFinished(m);
    console.log(`  finished in ${Date.now() - started} ms`);
  });

  it('after completion, before the finalizer is removed: the restart removes it', async () => {
    const started = Date.now();
    await restart();
    const m = await runningMachine('kill-after');
    // Machine, PodMachine and machine-backup: the VolumeBackup is recorded but nothing copies it.
    await restart(['machine', 'podmachine', 'machine-backup']);
    await client.delete(MACHINE, ns, 'kill-after');
    await recorded(m);
    // Only the VolumeBackup controller: the backup completes but nobody releases the Machine.
    await restart(['volumebackup']);
    await waitFor(
      'the VolumeBackup to complete',
      async () => (await backupsOf(m))[0]?.status?.phase === 'Completed',
    );
    await operator?.stop({ signal: 'SIGKILL' });
    const held = await getMachine(client, ns, 'kill-after');
    assert.ok(held?.metadata.finalizers?.includes(VOLUME_BACKUP_FINALIZER), 'the finalizer is still there');
    await restart();
    await assertFinished(m);
    console.log(`  finished in ${Date.now() - started} ms`);
  });

  it('while the PodMachine is being deleted: the restart sees it gone and releases the Machine', async () => {
    const started = Date.now();
    await restart();
    const m = await runningMachine('kill-release');
    await client.delete(MACHINE, ns, 'kill-release');
    // The backup is done and the Machine controller has deleted the PodMachine (foreground: its pod
    // and claims go first); the kill comes before the Machine is released.
    await waitFor(
      'the PodMachine to be deleted',
      async () => (await getPodMachine(client, ns, 'kill-release'))?.metadata.deletionTimestamp !== undefined,
      { intervalMs: 10, timeoutMs: 60_000 },
    );
    await operator?.stop({ signal: 'SIGKILL' });
    const held = await getMachine(client, ns, 'kill-release');
    assert.deepEqual(held?.metadata.finalizers, [MACHINE_FINALIZER], 'only the Machine finalizer holds it');
    // Under load the garbage collector may have finished it already; if not, it was asked to stop.
    const stopped = await getPodMachine(client, ns, 'kill-release');
    if (stopped) assert.equal(stopped.metadata.annotations?.[STOP_REQUESTED_ANNOTATION], 'true');
    // The garbage collector finishes the PodMachine while the operator is down: no event reaches it.
    await waitFor(
      'the garbage collector to delete the PodMachine',
      async () => (await getPodMachine(client, ns, 'kill-release')) === undefined,
      { timeoutMs: 60_000 },
    );
    assert.ok(await getMachine(client, ns, 'kill-release'), 'the Machine waits while the operator is down');
    await restart();
    await assertFinished(m);
    console.log(`  finished in ${Date.now() - started} ms`);
  });
});
