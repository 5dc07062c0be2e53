import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe } from 'node:test';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { Machine, MachineVolume, PodMachine, VolumeBackup } from '../../../src/apis/index.ts';
import { check, GiveUp, KIND_ONLY, KindRelease, note, seconds } from '../support/kind.ts';

/**
 * The bytes really survive: a Machine writes a random token and a random blob into its volume; the
 * Machine is deleted (its PodMachine stops the pod, the VolumeBackup controller copies the volume,
 * then the PodMachine and the Machine go); a new Machine restores its volume from that VolumeBackup
 * and reads back the same bytes. On kwok nothing runs inside pods, so only real containers and real
 * storage (kind's local-path) can show this. Both Machines are inline: each is realized as a
 * PodMachine of its name, whose pod (`<machine>`) and claim (`<machine>-data`) are read here.
 */

const TIMEOUT_MS = 180_000;
const BLOB_BYTES = 4 * 1024 * 1024;

describe('bytes survive a backup and a restore (kind)', { skip: KIND_ONLY }, () => {
  let release: KindRelease;
  const token = randomBytes(16).toString('hex');
  const image = () => release.cluster.images?.workload ?? 'busybox:1.36';
  const volume: MachineVolume = { name: 'data', size: '64Mi', mountPath: '/data' };
  let written = '';
  /** `stat` of the token in the writer: mode, owner and mtime. */
  let writtenStat = { mode: '', uid: '', mtime: '' };
  let backupName = '';

  before(async () => {
    release = await KindRelease.create({ topic: 'bytes' });
    await release.install();
  });

  after(async () => {
    await release?.cleanup();
  });

  const STEPS = [
    'a Machine of the workload image writes a token and a blob into its volume',
    'deleting the Machine backs its volume up first',
    'a new Machine restored from the VolumeBackup reads back the same bytes',
  ];

  // Each step needs the one before: without written data there is nothing to back up or restore.
  const step = (name: string, body: () => Promise<void>) =>
    check(
      () => release,
      name,
      TIMEOUT_MS + 60_000,
      async (t) => {
        if (name !== STEPS[0] && written === '') {
          t.skip('the Machine never wrote its data');
          return;
        }
        await body();
      },
    );

  step(STEPS[0]!, async () => {
    // The shell traps SIGTERM so the pod stops at once on delete (PID 1 ignores it otherwise).
    const script = [
      "trap 'exit 0' TERM",
      'mkdir -p /data/dir',
      `printf '%s' ${token} > /data/token`,
      `head -c ${BLOB_BYTES} /dev/urandom > /data/dir/blob`,
      'sha256sum /data/dir/blob > /data/blob.sha256',
      'sync',
      'touch /data/done',
      'sleep 3600 & wait',
    ].join('; ');
    await release.apply(
      machine(release.workloadNamespace, 'writer', image(), ['sh', '-c', script], [volume]),
    );
    await waitForMachineReady(release, 'writer');
    written = await release.waitFor(
      'the writer to finish writing /data',
      async () => {
        const result = await release.tools.kubectl(
          exec('writer', 'test -f /data/done && cat /data/blob.sha256'),
        );
        return result.code === 0 && result.stdout.trim();
      },
      { timeoutMs: 60_000, refs: ['machine/writer', 'podmachine/writer'] },
    );
    assert.equal(await release.kubectlOk(exec('writer', 'cat /data/token')), token);
    writtenStat = parseStat(await release.kubectlOk(exec('writer', STAT_TOKEN)));
    note(`writer: token ${token}, blob ${written}`);
  });

  step(STEPS[1]!, async () => {
    const writer = await release.get<Machine>('machine/writer');
    const started = Date.now();
    await release.kubectlOk(['delete', 'machine/writer', '-n', release.workloadNamespace, '--wait=false']);
    const backup = await release.waitFor(
      'a VolumeBackup of machine/writer to complete',
      async () => {
        const backups = await release.list<VolumeBackup>('volumebackups');
        const mine = backups.find((b) => b.spec.machineUID === writer.metadata.uid);
        if (mine?.status?.phase === 'Failed')
          throw new GiveUp(`the backup failed: ${JSON.stringify(mine.status)}`);
        return mine?.status?.phase === 'Completed' && mine;
      },
      { timeoutMs: TIMEOUT_MS, refs: ['machine/writer', 'podmachine/writer', 'volumebackups'] },
    );
    backupName = backup.metadata.name ?? '';
    await release.waitFor(
      'machine/writer to be gone once backed up',
      async () => (await release.find<Machine>('machine/writer')) === undefined,
      { timeoutMs: 60_000, refs: ['machine/writer', 'podmachine/writer'] },
    );
    assert.equal(
      await release.find<PodMachine>('podmachine/writer'),
      undefined,
      'its PodMachine went before the Machine',
    );
    note(
      `backup ${backupName} completed and the Machine went ${seconds(Date.now() - started)} after the delete`,
    );
    assert.deepEqual(
      backup.status?.volumes?.map((v) => v.name),
      ['data'],
      'the backup holds the one volume',
    );
  });

  step(STEPS[2]!, async () => {
    assert.ok(backupName, 'a VolumeBackup exists');
    const restored: MachineVolume = { ...volume, restoreFrom: { volumeBackup: backupName, volume: 'data' } };
    await release.apply(
      machine(
        release.workloadNamespace,
        'reader',
        image(),
        ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
        [restored],
      ),
    );
    await waitForMachineReady(release, 'reader');
    const claim = await release.get<V1PersistentVolumeClaim>('persistentvolumeclaim/reader-data');
    assert.equal(
      claim.metadata?.annotations?.['infra.basicoperator.dev/restored-from'],
      `${backupName}/data`,
      'the claim records its restore',
    );
    assert.equal(await release.kubectlOk(exec('reader', 'cat /data/token')), token, 'the token reads back');
    assert.equal(
      (await release.kubectlOk(exec('reader', 'sha256sum /data/dir/blob'))).trim(),
      written,
      'the blob reads back with the same sha256',
    );
    const size = (await release.kubectlOk(exec('reader', 'wc -c < /data/dir/blob'))).trim();
    assert.equal(Number(size), BLOB_BYTES);
    // As docs/machine-and-volumebackup.md says of copy pods: modes and times are kept, and the files
    // belong to the copy user (65532), since copies never run as root.
    const readStat = parseStat(await release.kubectlOk(exec('reader', STAT_TOKEN)));
    note(`token in the writer: ${JSON.stringify(writtenStat)}; restored: ${JSON.stringify(readStat)}`);
    assert.equal(readStat.mode, writtenStat.mode, 'the mode is kept');
    assert.equal(readStat.mtime, writtenStat.mtime, 'the modification time is kept');
    assert.equal(readStat.uid, '65532', 'the restored file belongs to the copy user');
  });

  function exec(pod: string, script: string): string[] {
    return ['exec', pod, '-n', release.workloadNamespace, '-c', 'machine', '--', 'sh', '-c', script];
  }
});

const STAT_TOKEN = "stat -c '%a %u %Y' /data/token";

function parseStat(out: string): { mode: string; uid: string; mtime: string } {
  const [mode = '', uid = '', mtime = ''] = out.trim().split(/\s+/);
  return { mode, uid, mtime };
}

function machine(
  namespace: string,
  name: string,
  image: string,
  command: string[],
  volumes: MachineVolume[],
): Machine {
  return {
    apiVersion: 'infra.basicoperator.dev/v1alpha1',
    kind: 'Machine',
    metadata: { name, namespace },
    spec: { image, command, volumes },
  };
}

async function waitForMachineReady(release: KindRelease, name: string): Promise<Machine> {
  return release.waitFor(
    `machine/${name} to be Running and Ready`,
    async () => {
      const m = await release.get<Machine>(`machine/${name}`);
      if (m.status?.phase === 'Failed')
        throw new GiveUp(`machine/${name} failed: ${JSON.stringify(m.status)}`);
      return m.status?.phase === 'Running' && m.status.ready === true && m;
    },
    { timeoutMs: TIMEOUT_MS, refs: [`machine/${name}`, `podmachine/${name}`] },
  );
}
