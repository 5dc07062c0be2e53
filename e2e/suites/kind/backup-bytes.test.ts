import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { Machine, MachineVolume, PodMachine, VolumeBackup } from '../../../src/apis/index.ts';
import {
  check,
  GiveUp,
  KIND_ONLY,
  KindRelease,
  note,
  seconds,
  waitForMachineReady,
} from '../support/kind.ts';

/**
 * The bytes really survive, with everything that makes a tree hard to copy: a Machine (running as
 * root in the workload image) writes files of other users (a 0600 file, a 0700 directory), a
 * symlink and a dangling one, a hard link, a sparse file, an empty file and directory, names with a
 * space and a newline, a setgid directory, 10,000 small files and one large file. The Machine is
 * deleted; while its volume is being copied the operator's leader is SIGKILLed and the copy pod is
 * deleted, and the backup must still complete only with a verified copy. A new Machine restores the
 * volume and the restored tree is listed as the writer listed it: every entry's path, mode, owner,
 * group, size, link count and mtime, and every file's sha256, equal; the sparse file still sparse.
 * On kwok nothing runs inside pods, so only real containers and real storage (kind's local-path)
 * can show this. Both Machines are inline: each is realized as a PodMachine of its name, whose pod
 * (`<machine>`) and claim (`<machine>-data`) are read here.
 */

const TIMEOUT_MS = 300_000;
const SMALL_FILES = 10_000;
const LARGE_MIB = 512;
const SPARSE_MIB = 64;

/** Writes the hard tree into /data (busybox sh, as root). */
const WRITE_TREE = [
  'set -e',
  'cd /data',
  'mkdir private && echo secret > private/password && chown -R 999:999 private && chmod 0700 private',
  'echo theirs > theirs && chown 1000:1000 theirs && chmod 0600 theirs',
  'ln -s private/password link && ln -s /nowhere dangling',
  'echo linked > hard1 && ln hard1 hard2',
  `dd if=/dev/zero of=sparse bs=1 count=0 seek=${SPARSE_MIB}M 2>/dev/null`,
  "printf 'in the middle' | dd of=sparse bs=1 seek=1048576 conv=notrunc 2>/dev/null",
  ': > empty && mkdir emptydir',
  "echo space > 'with space'",
  `printf newline > "$(printf 'new\\nline')"`,
  'mkdir sgid && chmod 2775 sgid && echo in-sgid > sgid/file',
  'mkdir many',
  `i=0; while [ $i -lt ${SMALL_FILES} ]; do echo $i > many/f$i; i=$((i+1)); done`,
  `dd if=/dev/urandom of=large bs=1M count=${LARGE_MIB} 2>/dev/null`,
  'sync',
].join('\n');

/**
 * Lists /data: a line per entry (found and sorted NUL-separated, so a name with a newline stays one
 * entry) with path, raw mode, owner, group, size, link count and mtime, then every regular file's
 * sha256. The same command on the writer and the reader must print the same bytes.
 */
const LIST_TREE = [
  'cd /data',
  "find . -print0 | sort -z | xargs -0 stat -c '%n|%f|%u|%g|%s|%h|%Y'",
  'find . -type f -print0 | sort -z | xargs -0 sha256sum',
].join('; ');

describe('a hard tree survives a backup and a restore, through faults (kind)', { skip: KIND_ONLY }, () => {
  let release: KindRelease;
  const image = () => release.cluster.images?.workload ?? 'busybox:1.36';
  const volume: MachineVolume = { name: 'data', size: '2Gi', mountPath: '/data' };
  let listing = '';
  let backupName = '';

  before(async () => {
    release = await KindRelease.create({ topic: 'bytes' });
    await release.install();
  });

  after(async () => {
    await release?.cleanup();
  });

  const STEPS = [
    'a Machine writes a hard tree into its volume',
    'deleting the Machine backs its volume up with a verified copy, through a SIGKILLed leader and a deleted copy pod',
    'a new Machine restored from the VolumeBackup lists the same tree',
  ];

  // Each step needs the one before: without written data there is nothing to back up or restore.
  const step = (name: string, body: () => Promise<void>) =>
    check(
      () => release,
      name,
      TIMEOUT_MS + 60_000,
      async (t) => {
        if (name !== STEPS[0] && listing === '') {
          t.skip('the Machine never wrote its data');
          return;
        }
        await body();
      },
    );

  step(STEPS[0]!, async () => {
    // The shell traps SIGTERM so the pod stops at once on delete (PID 1 ignores it otherwise).
    const script = `trap 'exit 0' TERM\n${WRITE_TREE}\ntouch /tmp/done\nsleep 3600 & wait`;
    const started = Date.now();
    await release.apply(
      machine(release.workloadNamespace, 'writer', image(), ['sh', '-c', script], [volume]),
    );
    await waitForMachineReady(release, 'writer', TIMEOUT_MS);
    await release.waitFor(
      'the writer to finish writing /data',
      async () => (await release.tools.kubectl(exec('writer', 'test -f /tmp/done'))).code === 0,
      { timeoutMs: TIMEOUT_MS, refs: ['machine/writer', 'podmachine/writer'] },
    );
    listing = await release.kubectlOk(exec('writer', LIST_TREE));
    const lines = listing.split('\n').length;
    note(`writer: tree written in ${seconds(Date.now() - started)}; a listing of ${lines} lines`);
    assert.ok(listing.includes('./private/password|'), 'the listing names the tree');
  });

  step(STEPS[1]!, async () => {
    const writer = await release.get<Machine>('machine/writer');
    const started = Date.now();
    await release.kubectlOk(['delete', 'machine/writer', '-n', release.workloadNamespace, '--wait=false']);

    // Mid-copy: the first copy pod runs. SIGKILL the leader (no grace: nothing is released), then
    // delete the copy pod: that attempt must fail and be retried, never counted as a copy.
    const copyPod = await release.waitFor(
      'the first copy pod to run',
      async () => {
        const pods = await release.list<V1Pod>(
          'pods',
          release.workloadNamespace,
          'infra.basicoperator.dev/role=backup,infra.basicoperator.dev/attempt=1',
        );
        return pods.find((p) => p.status?.phase === 'Running');
      },
      { timeoutMs: TIMEOUT_MS, refs: ['machine/writer', 'volumebackups', 'jobs'] },
    );
    const operators = (await release.operatorPods()).map((p) => p.metadata?.name ?? '');
    await Promise.all([
      release.kubectlOk([
        'delete',
        'pod',
        copyPod.metadata?.name ?? '',
        '-n',
        release.workloadNamespace,
        '--wait=false',
      ]),
      release.kubectlOk([
        'delete',
        'pod',
        ...operators,
        '-n',
        release.namespace,
        '--grace-period=0',
        '--force',
      ]),
    ]);
    note(
      `killed the operator pods and deleted copy pod ${copyPod.metadata?.name} ${seconds(Date.now() - started)} after the delete`,
    );

    const backup = await release.waitFor(
      'a VolumeBackup of machine/writer to complete',
      async () => {
        const backups = await release.list<VolumeBackup>('volumebackups');
        const mine = backups.find((b) => b.spec.machineUID === writer.metadata.uid);
        if (mine?.status?.phase === 'Failed')
          throw new GiveUp(`the backup failed: ${JSON.stringify(mine.status)}`);
        return mine?.status?.phase === 'Completed' && mine;
      },
      { timeoutMs: TIMEOUT_MS, refs: ['machine/writer', 'podmachine/writer', 'volumebackups', 'jobs'] },
    );
    backupName = backup.metadata.name ?? '';
    const completedIn = Date.now() - started;
    await release.waitFor(
      'machine/writer to be gone once backed up',
      async () => (await release.find<Machine>('machine/writer')) === undefined,
      { timeoutMs: 60_000, refs: ['machine/writer', 'podmachine/writer'] },
    );
    assert.equal(await release.find<PodMachine>('podmachine/writer'), undefined, 'its PodMachine went first');

    const manifest = backup.status?.volumes?.[0]?.manifest;
    assert.ok(manifest, 'the backup records a verified manifest');
    assert.equal(manifest.files, SMALL_FILES + 10, 'every name of a regular file (both of the hard link)');
    const jobs = await release.list<V1Job>(
      'jobs',
      release.workloadNamespace,
      `infra.basicoperator.dev/role=backup`,
    );
    const first = jobs.find((j) => j.metadata?.labels?.['infra.basicoperator.dev/attempt'] === '1');
    assert.ok(
      first?.metadata?.annotations?.['infra.basicoperator.dev/copy-failure'] !== undefined,
      `the interrupted attempt is recorded as a failure: ${JSON.stringify(first?.metadata?.annotations)}`,
    );
    const verified = jobs.find((j) => j.metadata?.annotations?.['infra.basicoperator.dev/copy-report']);
    const report = JSON.parse(
      verified?.metadata?.annotations?.['infra.basicoperator.dev/copy-report'] ?? '{}',
    );
    const mbPerS = manifest.bytes / 1e6 / (report.copyMs / 1000);
    note(
      `backup ${backupName}: ${manifest.files} files, ${(manifest.bytes / 1e6).toFixed(1)} MB, ${manifest.digest}; ` +
        `Completed ${seconds(completedIn)} after the delete over ${jobs.length} attempts; ` +
        `the verified copy took ${seconds(report.copyMs)} (${mbPerS.toFixed(1)} MB/s), both manifests ${seconds(report.manifestMs)}`,
    );
  });

  step(STEPS[2]!, async () => {
    assert.ok(backupName, 'a VolumeBackup exists');
    const restored: MachineVolume = { ...volume, restoreFrom: { volumeBackup: backupName, volume: 'data' } };
    const started = Date.now();
    await release.apply(
      machine(
        release.workloadNamespace,
        'reader',
        image(),
        ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
        [restored],
      ),
    );
    await waitForMachineReady(release, 'reader', TIMEOUT_MS);
    note(`reader: restored and Ready ${seconds(Date.now() - started)} after it was created`);
    const claim = await release.get<V1PersistentVolumeClaim>('persistentvolumeclaim/reader-data');
    assert.equal(
      claim.metadata?.annotations?.['infra.basicoperator.dev/restored-from'],
      `${backupName}/data`,
      'the claim records its restore',
    );
    const restoredListing = await release.kubectlOk(exec('reader', LIST_TREE));
    if (restoredListing !== listing) {
      const a = listing.split('\n');
      const b = restoredListing.split('\n');
      const first = a.findIndex((line, i) => line !== b[i]);
      assert.fail(
        `the restored tree differs, first at record ${first}: writer ${JSON.stringify(a[first])}, reader ${JSON.stringify(b[first])}`,
      );
    }
    // Sparse stays sparse: 64 MiB long, a few KiB on disk.
    const usedKiB = Number((await release.kubectlOk(exec('reader', 'du -k /data/sparse | cut -f1'))).trim());
    assert.ok(usedKiB < 1024, `the sparse file takes ${usedKiB} KiB on disk`);
  });

  function exec(pod: string, script: string): string[] {
    return ['exec', pod, '-n', release.workloadNamespace, '-c', 'machine', '--', 'sh', '-c', script];
  }
});

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
