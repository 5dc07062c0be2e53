// Another controller's finalizers on the same Machines survive every edit the operator makes (the
// Machine controller's infra.basicoperator.dev/machine and the VolumeBackup controller's
// infra.basicoperator.dev/volume-backup), and hold the Machine, and its PodMachine, after ours go.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  MACHINE,
  MACHINE_FINALIZER,
  type Machine,
  VOLUME_BACKUP_FINALIZER,
} from '../../../src/apis/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { addFinalizer, removeFinalizer } from '../../../src/runtime/write/finalizers.ts';
import {
  backups,
  condition,
  getMachine,
  getPodMachine,
  type MachineSuite,
  machine,
  startMachineSuite,
  stopMachineSuite,
  waitForGone,
  waitForMachine,
} from './helpers.ts';

const OTHER = 'example.com/other-controller';
const FLAPPING = 'example.com/flapping';

const finalizersOf = (m: Machine | undefined) => m?.metadata.finalizers ?? [];
const sorted = (list: readonly string[]) => [...list].sort();
const hasOurs = (m: Machine) =>
  finalizersOf(m).includes(MACHINE_FINALIZER) && finalizersOf(m).includes(VOLUME_BACKUP_FINALIZER);

describe("another controller's finalizer on the same Machine", () => {
  let suite: MachineSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    suite = await startMachineSuite('machine-fin', 20);
    ({ client, ns } = suite);
  });
  after(() => stopMachineSuite(suite));

  it('survives a race with our first finalizer edit, on several Machines at once', async () => {
    const names = ['race-0', 'race-1', 'race-2', 'race-3', 'race-4'];
    await Promise.all(
      names.map(async (name) => {
        const created = await client.create<Machine>(MACHINE, machine(ns, name, { volumes: [] }));
        // No wait: this edit races with the operator adding its own finalizer.
        await addFinalizer(client, MACHINE, created, OTHER);
      }),
    );
    for (const name of names) {
      const m = await waitForMachine(client, ns, name, 'our two finalizers', hasOurs);
      assert.deepEqual(
        sorted(finalizersOf(m)),
        sorted([OTHER, MACHINE_FINALIZER, VOLUME_BACKUP_FINALIZER]),
        `${name} kept ${OTHER}`,
      );
    }
  });

  it('survives our adds and removes while it flaps its own, and holds the Machine after our release', async () => {
    const started = Date.now();
    await client.create(MACHINE, {
      ...machine(ns, 'shared'),
      metadata: { name: 'shared', namespace: ns, finalizers: [OTHER] },
    });
    await waitForMachine(client, ns, 'shared', 'our finalizers added', hasOurs);

    // Another controller flaps a finalizer of its own, while the policy flips make the VolumeBackup
    // controller remove and re-add its finalizer; every version of the Machine we see must still
    // carry OTHER, and the Machine controller's finalizer, which stays while the Machine lives.
    const stop = new AbortController();
    let lost = '';
    const watchdog = (async () => {
      while (!stop.signal.aborted) {
        const m = await getMachine(client, ns, 'shared');
        if (m && !finalizersOf(m).includes(OTHER)) lost = `lost ${OTHER}: ${finalizersOf(m)}`;
        if (m && !finalizersOf(m).includes(MACHINE_FINALIZER)) {
          lost = `lost ${MACHINE_FINALIZER}: ${finalizersOf(m)}`;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    let flaps = 0;
    const flapper = (async () => {
      while (!stop.signal.aborted) {
        const m = await getMachine(client, ns, 'shared');
        if (!m) return;
        const edit = finalizersOf(m).includes(FLAPPING) ? removeFinalizer : addFinalizer;
        await edit(client, MACHINE, m, FLAPPING).catch(() => undefined);
        flaps++;
      }
    })();
    for (const policy of ['None', 'OnDelete', 'None', 'OnDelete', 'None', 'OnDelete'] as const) {
      await client.patch(MACHINE, {
        namespace: ns,
        name: 'shared',
        patchType: 'merge',
        body: { spec: { backup: { policy } } },
      });
      await waitForMachine(
        client,
        ns,
        'shared',
        `our finalizer to follow policy ${policy}`,
        (x) => finalizersOf(x).includes(VOLUME_BACKUP_FINALIZER) === (policy === 'OnDelete'),
      );
    }
    stop.abort();
    await Promise.all([watchdog, flapper]);
    console.log(
      `  ${flaps} flaps of ${FLAPPING} while the backup finalizer was removed and added 3 times each`,
    );
    assert.equal(lost, '');
    let m = await getMachine(client, ns, 'shared');
    if (finalizersOf(m).includes(FLAPPING)) m = await removeFinalizer(client, MACHINE, m!, FLAPPING);
    assert.deepEqual(sorted(finalizersOf(m)), sorted([OTHER, MACHINE_FINALIZER, VOLUME_BACKUP_FINALIZER]));

    // Deletion: the backup is made and only its finalizer goes; the other one keeps the Machine, and
    // the Machine controller keeps its own, and the stopped PodMachine with the claims, until then.
    await client.delete(MACHINE, ns, 'shared');
    const held = await waitForMachine(
      client,
      ns,
      'shared',
      'backed up, held by the other finalizer',
      (x) => !finalizersOf(x).includes(VOLUME_BACKUP_FINALIZER),
      90_000,
    );
    assert.deepEqual(sorted(finalizersOf(held)), sorted([OTHER, MACHINE_FINALIZER]));
    assert.equal(held.status?.phase, 'Stopped');
    const stopped = await getPodMachine(client, ns, 'shared');
    assert.equal(stopped?.status?.stopped, true, 'the PodMachine is kept, stopped');
    assert.equal(stopped?.metadata.deletionTimestamp, undefined, 'not deleted while another finalizer holds');
    // The condition is written (flushed from the background status writer) before the release.
    assert.equal(condition(held, 'VolumeBackup')?.reason, 'BackupCompleted');
    assert.equal(condition(held, 'VolumeBackup')?.status, 'True');
    const mine = (await backups(client, ns)).filter((b) => b.spec.machineUID === held.metadata.uid);
    assert.equal(mine.length, 1);
    assert.equal(mine[0]?.status?.phase, 'Completed');

    await removeFinalizer(client, MACHINE, held, OTHER);
    await waitForGone(client, ns, 'shared');
    assert.equal(await getPodMachine(client, ns, 'shared'), undefined, 'the PodMachine went first');
    console.log(`  finished in ${Date.now() - started} ms`);
  });

  it('lets the race Machines go: the backup finalizer at once (no volumes), the rest once they drop theirs', async () => {
    for (const name of ['race-0', 'race-1', 'race-2', 'race-3', 'race-4']) {
      await client.delete(MACHINE, ns, name);
    }
    for (const name of ['race-0', 'race-1', 'race-2', 'race-3', 'race-4']) {
      const m = await waitForMachine(
        client,
        ns,
        name,
        'the backup finalizer gone',
        (x) => !finalizersOf(x).includes(VOLUME_BACKUP_FINALIZER),
      );
      assert.deepEqual(sorted(finalizersOf(m)), sorted([OTHER, MACHINE_FINALIZER]));
      await removeFinalizer(client, MACHINE, m, OTHER);
    }
    await waitFor('all race Machines and their PodMachines to be gone', async () => {
      for (const name of ['race-0', 'race-1', 'race-2', 'race-3', 'race-4']) {
        if (await getMachine(client, ns, name)) return false;
        if (await getPodMachine(client, ns, name)) return false;
      }
      return true;
    });
  });
});
