// The bytes really survive: write a file in a Machine, delete it (backup), restore into a new
// Machine, read the file back. Needs real containers and storage, so it runs only on kind
// (E2E_PROVIDER=kind, which needs Docker); on the local kwok cluster nothing runs in the pods.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { runOk } from '../../../e2e/providers/exec.ts';
import { MACHINE } from '../../../src/apis/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { testCluster } from '../../support/cluster.ts';
import { waitFor } from '../../support/wait.ts';
import {
  backups,
  isRunningAndReady,
  type MachineSuite,
  machine,
  startMachineSuite,
  stopMachineSuite,
  waitForGone,
  waitForMachine,
} from './helpers.ts';

const onKind = process.env.E2E_PROVIDER === 'kind';
const IMAGE = 'busybox:1.36';
const SLOW = 180_000;

describe('bytes survive a backup and a restore (kind only)', {
  skip: !onKind && 'needs E2E_PROVIDER=kind',
}, () => {
  let suite: MachineSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    suite = await startMachineSuite('machine-bytes', 0);
    ({ client, ns } = suite);
  });
  after(() => stopMachineSuite(suite));

  async function exec(pod: string, command: string[]): Promise<string> {
    const info = await testCluster();
    return runOk(info.kubectl, ['--kubeconfig', info.kubeconfig, '-n', ns, 'exec', pod, '--', ...command]);
  }

  it('writes a file, deletes the Machine, restores it into a new one and reads the same bytes', async () => {
    const token = randomBytes(16).toString('hex');
    const volumes = [{ name: 'data', size: '64Mi', mountPath: '/data' }];
    await client.create(
      MACHINE,
      machine(ns, 'writer', {
        image: IMAGE,
        command: ['sh', '-c', `printf '%s' ${token} > /data/token && sync && sleep 3600`],
        volumes,
      }),
    );
    await waitForMachine(client, ns, 'writer', 'Running and Ready', isRunningAndReady, SLOW);
    await waitFor(
      'the file to be written',
      async () => (await exec('writer', ['cat', '/data/token'])) === token,
      {
        timeoutMs: 60_000,
        intervalMs: 1000,
      },
    );

    await client.delete(MACHINE, ns, 'writer');
    await waitForGone(client, ns, 'writer', SLOW);
    const [backup] = await backups(client, ns);
    assert.ok(backup, 'a VolumeBackup was recorded');
    assert.equal(backup.status?.phase, 'Completed');

    await client.create(
      MACHINE,
      machine(ns, 'reader', {
        image: IMAGE,
        command: ['sleep', '3600'],
        volumes: [
          { ...volumes[0]!, restoreFrom: { volumeBackup: backup.metadata.name ?? '', volume: 'data' } },
        ],
      }),
    );
    await waitForMachine(client, ns, 'reader', 'Running and Ready', isRunningAndReady, SLOW);
    assert.equal(await exec('reader', ['cat', '/data/token']), token);
  });
});
