// Copies as the workload, in a namespace that enforces Pod Security `restricted` (kube-apiserver's
// admission is real here; kwok plays the mover): a VolumeBackup's copyAs is bounded and immutable,
// the backup of a Machine records its pod's user, group and fsGroup and its copy pods run as them,
// and a PodMachine restores as its own pod runs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { labelNamespace } from '../../../e2e/support/namespace.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  MACHINE,
  POD_MACHINE,
  VOLUME_BACKUP,
  VOLUME_BACKUP_FINALIZER,
  type VolumeBackup,
} from '../../../src/apis/index.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { podMachine } from '../podmachine/helpers.ts';
import {
  backups,
  condition,
  controllerUid,
  getPodMachine,
  isComplete,
  jobs,
  type MachineSuite,
  machine,
  startMachineSuite,
  stopMachineSuite,
  waitForGone,
  waitForMachine,
} from './helpers.ts';

const RESTRICTED = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/enforce-version': 'latest',
};
const POSTGRES = { runAsUser: 999, runAsGroup: 999, fsGroup: 999 };

describe('copies as the workload under Pod Security restricted', () => {
  let suite: MachineSuite | undefined;
  let client: KubeClient;
  let ns: string;
  let backupName = '';

  before(async () => {
    suite = await startMachineSuite('machine-copy-as', 6);
    ({ client, ns } = suite);
    await labelNamespace(client, ns, RESTRICTED);
  });
  after(() => stopMachineSuite(suite));

  const standalone = (name: string, copyAs: unknown): VolumeBackup =>
    ({
      apiVersion: VOLUME_BACKUP.apiVersion,
      kind: VOLUME_BACKUP.kind,
      metadata: { name, namespace: ns },
      spec: { copyAs, volumes: [{ name: 'data', claimName: 'no-such-claim' }] },
    }) as VolumeBackup;

  async function refusal(write: () => Promise<unknown>): Promise<string> {
    try {
      await write();
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 422) return err.message;
      throw err;
    }
    return assert.fail('the API server accepted it');
  }

  const badCopyAs: Array<{ what: string; copyAs: unknown; says: RegExp }> = [
    {
      what: 'root',
      copyAs: { runAsUser: 0, runAsGroup: 0 },
      says: /spec\.copyAs\.runAsUser: Invalid value: 0: spec\.copyAs\.runAsUser in body should be greater than or equal to 1/,
    },
    {
      what: 'a uid beyond 2^31-1',
      copyAs: { runAsUser: 2147483648, runAsGroup: 1 },
      says: /spec\.copyAs\.runAsUser: Invalid value: 2147483648: .* should be less than or equal to 2147483647/,
    },
    {
      what: 'a negative group',
      copyAs: { runAsUser: 999, runAsGroup: -1 },
      says: /spec\.copyAs\.runAsGroup: Invalid value: -1: .* should be greater than or equal to 0/,
    },
    {
      what: 'a negative fsGroup',
      copyAs: { runAsUser: 999, runAsGroup: 999, fsGroup: -5 },
      says: /spec\.copyAs\.fsGroup: Invalid value: -5: .* should be greater than or equal to 0/,
    },
    {
      what: 'no group',
      copyAs: { runAsUser: 999 },
      says: /spec\.copyAs\.runAsGroup: Required value/,
    },
  ];
  for (const { what, copyAs, says } of badCopyAs) {
    it(`refuses a copyAs of ${what}`, async () => {
      const message = await refusal(() => client.create(VOLUME_BACKUP, standalone('bad', copyAs)));
      assert.match(message, says);
    });
  }

  it('keeps copyAs as created: a change, an addition and a removal are refused', async () => {
    await client.create(VOLUME_BACKUP, standalone('fixed', POSTGRES));
    // Merge patches, not GET and PUT: the VolumeBackup controller writes the status in between.
    const patchSpec = (name: string, spec: Record<string, unknown>) =>
      client.patch(VOLUME_BACKUP, { namespace: ns, name, patchType: 'merge', body: { spec } });
    assert.match(
      await refusal(() => patchSpec('fixed', { copyAs: { ...POSTGRES, runAsUser: 1000 } })),
      /spec is immutable/,
    );
    assert.match(await refusal(() => patchSpec('fixed', { copyAs: null })), /spec is immutable/);
    await client.create(VOLUME_BACKUP, standalone('unset', undefined));
    assert.match(await refusal(() => patchSpec('unset', { copyAs: POSTGRES })), /spec is immutable/);
  });

  it("backs a Machine up as its pod's user, group and fsGroup: recorded in copyAs, the copy pods admitted", async () => {
    await client.create(
      MACHINE,
      machine(ns, 'db', {
        volumes: [{ name: 'data', size: '1Gi', mountPath: '/var/lib/postgresql' }],
        podSecurityContext: POSTGRES,
      }),
    );
    const m = await waitForMachine(
      client,
      ns,
      'db',
      'its claim reported, holding the backup finalizer',
      (x) =>
        (x.metadata.finalizers ?? []).includes(VOLUME_BACKUP_FINALIZER) &&
        x.status?.volumes?.[0]?.claimName === 'db-data',
    );
    await client.delete(MACHINE, ns, 'db');
    await waitForGone(client, ns, 'db', 90_000);
    const backup = (await backups(client, ns)).find((b) => b.spec.machineUID === m.metadata.uid);
    assert.ok(backup, 'the operator recorded a VolumeBackup');
    assert.deepEqual(backup.spec.copyAs, POSTGRES);
    assert.equal(backup.status?.phase, 'Completed');
    backupName = backup.metadata.name ?? '';
    const copy = (await jobs(client, ns)).find((j) => controllerUid(j) === backup.metadata.uid);
    assert.ok(copy && isComplete(copy), 'the copy Job ran under restricted');
    assert.deepEqual(copy.spec?.template.spec?.securityContext, {
      runAsNonRoot: true,
      ...POSTGRES,
      fsGroupChangePolicy: 'OnRootMismatch',
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  it('restores a PodMachine as its own pod runs', async () => {
    assert.ok(backupName, 'needs the backup of the previous test');
    await client.create(
      POD_MACHINE,
      podMachine(ns, 'db2', {
        volumes: [
          {
            name: 'data',
            size: '1Gi',
            mountPath: '/var/lib/postgresql',
            restoreFrom: { volumeBackup: backupName, volume: 'data' },
          },
        ],
        podSecurityContext: { runAsUser: 999, runAsGroup: 998 },
      }),
    );
    const job = await waitFor(
      'the restore Job of db2 to complete',
      async () => {
        const j = await client.get<V1Job>(CoreTypes.Job, ns, 'db2-data-restore').catch(() => undefined);
        return j && isComplete(j) ? j : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const security = job.spec?.template.spec?.securityContext;
    assert.equal(security?.runAsUser, 999);
    assert.equal(security?.runAsGroup, 998);
    assert.equal(security?.fsGroup, 65532, "the PodMachine's fsGroup, 65532 when it names none");
    const pm = await waitFor(
      'db2 to report its volume restored',
      async () => {
        const p = await getPodMachine(client, ns, 'db2');
        return condition(p, 'VolumesReady')?.status === 'True' ? p : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.equal(pm.status?.failureReason, undefined);
  });
});
