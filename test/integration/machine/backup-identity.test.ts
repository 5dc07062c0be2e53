// Which VolumeBackup releases a Machine: only the one the operator itself created for the deletion
// (by uid), Completed with a verified copy of every volume. Issue 35's reproduction: a hand-made
// VolumeBackup named `<machine>-<uid8>` with the Machine's uid used to release the Machine, its
// PodMachine and its claims at once, with nothing copied.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  MACHINE,
  type Machine,
  SKIP_BACKUP_ANNOTATION,
  VOLUME_BACKUP,
  type VolumeBackup,
} from '../../../src/apis/index.ts';
import { isInvalid } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import {
  backups,
  claims,
  condition,
  getMachine,
  isRunningAndReady,
  type MachineSuite,
  machine,
  startMachineSuite,
  stopMachineSuite,
  waitForEvent,
  waitForGone,
  waitForMachine,
} from './helpers.ts';

const ONE_VOLUME = [{ name: 'data', size: '1Gi', mountPath: '/data' }];

function uid8(m: Machine): string {
  return (m.metadata.uid ?? '').replace(/-/g, '').slice(0, 8);
}

function forged(m: Machine, volumes: VolumeBackup['spec']['volumes']): VolumeBackup {
  return {
    apiVersion: VOLUME_BACKUP.apiVersion,
    kind: VOLUME_BACKUP.kind,
    metadata: { name: `${m.metadata.name}-${uid8(m)}`, namespace: m.metadata.namespace },
    spec: { machineName: m.metadata.name ?? '', machineUID: m.metadata.uid ?? '', volumes },
  };
}

describe('the backup that releases a Machine is the one the operator made', () => {
  let suite: MachineSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    suite = await startMachineSuite('machine-identity', 12);
    ({ client, ns } = suite);
  });
  after(() => stopMachineSuite(suite));

  async function running(name: string): Promise<Machine> {
    await client.create(MACHINE, machine(ns, name, { volumes: ONE_VOLUME }));
    return waitForMachine(client, ns, name, 'Running and Ready', isRunningAndReady);
  }

  it('refuses a VolumeBackup without volumes, or with only half of the Machine it names', async () => {
    const m = await running('schema');
    for (const [what, body] of [
      ['no volumes', forged(m, [])],
      [
        'machineName without machineUID',
        {
          ...forged(m, [{ name: 'data', claimName: 'schema-data' }]),
          spec: { machineName: 'schema', volumes: [{ name: 'data', claimName: 'schema-data' }] },
        },
      ],
    ] as const) {
      await assert.rejects(
        client.create(VOLUME_BACKUP, body),
        (err: unknown) => isInvalid(err),
        `${what} is refused by the schema`,
      );
    }
  });

  it('a hand-made VolumeBackup of the expected name and uid does not release the Machine: BackupConflict, and the data stays', async () => {
    const m = await running('db');
    const fake = await client.create<VolumeBackup>(
      VOLUME_BACKUP,
      forged(m, [{ name: 'data', claimName: 'db-data' }]),
    );
    await client.delete(MACHINE, ns, 'db');
    const held = await waitForMachine(
      client,
      ns,
      'db',
      'VolumeBackup condition BackupConflict',
      (x) => condition(x, 'VolumeBackup')?.reason === 'BackupConflict',
    );
    const message = condition(held, 'VolumeBackup')?.message ?? '';
    assert.match(message, new RegExp(`VolumeBackup ${fake.metadata.name}`), 'names the VolumeBackup');
    assert.match(message, new RegExp(`Machine db \\(uid ${m.metadata.uid}\\)`), 'names the Machine');
    const event = await waitForEvent(client, ns, 'Machine', 'db', 'BackupConflict');
    assert.equal(event.type, 'Warning');
    // Whatever the forged backup's own progress (the operator copies it like any backup of the
    // Machine's claim), the Machine and its claim stay.
    await waitFor('the forged VolumeBackup to finish', async () => {
      const b = await client.get<VolumeBackup>(VOLUME_BACKUP, ns, fake.metadata.name ?? '');
      return b.status?.phase === 'Completed' || b.status?.phase === 'Failed' ? b : undefined;
    });
    const still = await getMachine(client, ns, 'db');
    assert.ok(still, 'the Machine is kept');
    assert.equal(condition(still, 'VolumeBackup')?.reason, 'BackupConflict');
    assert.ok(
      (await claims(client, ns)).some((c) => c.metadata?.name === 'db-data' && !c.metadata.deletionTimestamp),
      'its claim is kept',
    );

    // Deleting the impostor lets the operator back the Machine up itself, and only then let it go.
    await client.delete(VOLUME_BACKUP, ns, fake.metadata.name ?? '');
    await waitForGone(client, ns, 'db', 90_000);
    const own = (await backups(client, ns)).find((b) => b.spec.machineUID === m.metadata.uid);
    assert.ok(own, 'the operator made its own VolumeBackup');
    assert.notEqual(own.metadata.uid, fake.metadata.uid, 'a new object, not the impostor');
    assert.equal(own.status?.phase, 'Completed');
    assert.match(
      own.status?.volumes?.[0]?.manifest?.digest ?? '',
      /^sha256:[0-9a-f]{64}$/,
      'a verified copy',
    );
  });

  it('records the VolumeBackup it created on the Machine, by name and uid', async () => {
    const m = await running('recorded');
    // Another finalizer keeps the Machine after ours goes, so its last status can be read.
    await client.patch(MACHINE, {
      namespace: ns,
      name: 'recorded',
      patchType: 'json',
      body: [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/hold' }],
    });
    await client.delete(MACHINE, ns, 'recorded');
    const released = await waitForMachine(
      client,
      ns,
      'recorded',
      'BackupCompleted',
      (x) => condition(x, 'VolumeBackup')?.reason === 'BackupCompleted',
      90_000,
    );
    const own = (await backups(client, ns)).find((b) => b.spec.machineUID === m.metadata.uid);
    assert.deepEqual(released.status?.volumeBackup, { name: own?.metadata.name, uid: own?.metadata.uid });
    await client.patch(MACHINE, {
      namespace: ns,
      name: 'recorded',
      patchType: 'merge',
      body: { metadata: { finalizers: null } },
    });
  });

  it('a VolumeBackup that names a Machine copies only the claims that Machine reports', async () => {
    await running('owner');
    const victim = await running('victim');
    const owner = await client.get<Machine>(MACHINE, ns, 'owner');
    // "owner"'s name and uid, "victim"'s claim: hand-made, so no Machine counts it, and the operator
    // refuses to copy a claim with the standing of a Machine that does not report it.
    const theft: VolumeBackup = {
      ...forged(owner, [{ name: 'data', claimName: 'victim-data' }]),
      metadata: { name: 'theft', namespace: ns },
    };
    await client.create(VOLUME_BACKUP, theft);
    const failed = await waitFor('the VolumeBackup to fail', async () => {
      const b = await client.get<VolumeBackup>(VOLUME_BACKUP, ns, 'theft');
      return b.status?.phase === 'Failed' ? b : undefined;
    });
    assert.match(
      condition(failed, 'Ready')?.message ?? '',
      /claim victim-data is not the claim Machine owner reports for it .*copies only the claims that Machine reports/,
    );
    const copyJobs = (await client.list(CoreTypes.Job, { namespace: ns })).items.filter(
      (j) => j.metadata?.labels?.['infra.basicoperator.dev/volume-backup'] === 'theft',
    );
    assert.deepEqual(copyJobs, [], 'nothing was copied');
    assert.ok(victim.metadata.uid);
  });

  it('the skip annotation still lets a Machine with a hand-made VolumeBackup go', async () => {
    const m = await running('skipped');
    await client.create(VOLUME_BACKUP, forged(m, [{ name: 'data', claimName: 'skipped-data' }]));
    await client.delete(MACHINE, ns, 'skipped');
    await waitForMachine(
      client,
      ns,
      'skipped',
      'BackupConflict',
      (x) => condition(x, 'VolumeBackup')?.reason === 'BackupConflict',
    );
    await client.patch(MACHINE, {
      namespace: ns,
      name: 'skipped',
      patchType: 'merge',
      body: { metadata: { annotations: { [SKIP_BACKUP_ANNOTATION]: 'true' } } },
    });
    await waitForGone(client, ns, 'skipped');
  });

  it('a backup claim outlives a delete while its VolumeBackup exists; a restore from it fails at once', async () => {
    const m = await running('kept');
    await client.delete(MACHINE, ns, 'kept');
    await waitForGone(client, ns, 'kept', 90_000);
    const own = (await backups(client, ns)).find((b) => b.spec.machineUID === m.metadata.uid);
    const claimName = own?.status?.volumes?.[0]?.backupClaimName ?? '';
    assert.ok(own && claimName, 'a Completed backup with its claim');
    const name = own.metadata.name ?? '';

    await client.delete(CoreTypes.PersistentVolumeClaim, ns, claimName);
    const noted = await waitFor('the VolumeBackup to say its claim is being deleted', async () => {
      const b = await client.get<VolumeBackup>(VOLUME_BACKUP, ns, name);
      return condition(b, 'Restorable')?.reason === 'BackupClaimDeleting' ? b : undefined;
    });
    assert.equal(condition(noted, 'Restorable')?.status, 'False');
    assert.equal(noted.status?.phase, 'Completed', 'still the record of a completed backup');
    assert.ok(
      (await claims(client, ns)).some((c) => c.metadata?.name === claimName),
      'the claim, and its bytes, stay while the VolumeBackup exists',
    );

    await client.create(
      MACHINE,
      machine(ns, 'restored', {
        volumes: [{ ...ONE_VOLUME[0]!, restoreFrom: { volumeBackup: name, volume: 'data' } }],
      }),
    );
    const refused = await waitForMachine(client, ns, 'restored', 'a failed restore', (x) =>
      /BackupClaimLost/.test(JSON.stringify(x.status?.conditions ?? [])),
    );
    assert.match(JSON.stringify(refused.status?.conditions), new RegExp(claimName));

    await client.delete(VOLUME_BACKUP, ns, name);
    await waitFor('the backup claim to follow its VolumeBackup', async () =>
      (await claims(client, ns)).every((c) => c.metadata?.name !== claimName),
    );
  });
});
