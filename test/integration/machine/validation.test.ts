// Bad input: the API server rejects schema-invalid Machines, and edits of what a Machine's provider
// object was made from, with readable messages; a restore from a VolumeBackup that does not exist
// leaves the Machine waiting with a clear condition.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MACHINE, type Machine, POD_MACHINE } from '../../../src/apis/index.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import {
  condition,
  getPodMachine,
  type MachineSuite,
  machine,
  startMachineSuite,
  stopMachineSuite,
  waitForEvent,
  waitForMachine,
} from './helpers.ts';

const EXACTLY_ONE =
  /set exactly one of image \(an inline Machine, realized as a PodMachine\) and infrastructureRef/;
const podMachineRef = (name: string) => ({
  apiVersion: POD_MACHINE.apiVersion,
  kind: POD_MACHINE.kind,
  name,
});

/** The rejection of creating `obj`, as status code and message. */
async function rejection(client: KubeClient, obj: unknown): Promise<{ code: number; message: string }> {
  try {
    await client.create(MACHINE, obj as Machine);
  } catch (err) {
    if (err instanceof ApiError) return { code: err.statusCode, message: err.message };
    throw err;
  }
  assert.fail('the API server accepted an invalid Machine');
}

describe('bad input', () => {
  let suite: MachineSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    suite = await startMachineSuite('machine-bad', 10);
    ({ client, ns } = suite);
  });
  after(() => stopMachineSuite(suite));

  const base = () => machine('', 'x');
  const withVolumes = (volumes: unknown[]) => ({ ...base(), spec: { ...base().spec, volumes } });
  const cases: Array<{ what: string; obj: () => unknown; expect: RegExp[] }> = [
    {
      what: 'neither image nor infrastructureRef',
      obj: () => ({ ...base(), spec: {} }),
      expect: [/spec: Invalid value/, EXACTLY_ONE],
    },
    {
      what: 'volumes without an image',
      obj: () => ({ ...base(), spec: { volumes: [] } }),
      expect: [EXACTLY_ONE, /command, args, volumes and the pod fields .* describe an inline Machine/],
    },
    {
      what: 'both image and infrastructureRef',
      obj: () => ({ ...base(), spec: { image: 'x', infrastructureRef: podMachineRef('pm') } }),
      expect: [/spec: Invalid value/, EXACTLY_ONE],
    },
    {
      what: 'volumes with infrastructureRef',
      obj: () => ({
        ...base(),
        spec: {
          infrastructureRef: podMachineRef('pm'),
          volumes: [{ name: 'data', size: '1Gi', mountPath: '/data' }],
        },
      }),
      expect: [
        /command, args, volumes and the pod fields \(env, resources, probes, securityContext, \.\.\.\) describe an inline Machine; with infrastructureRef they belong in the provider object/,
      ],
    },
    {
      what: 'an infrastructureRef without a name, and with a kind that is not one',
      obj: () => ({
        ...base(),
        spec: { infrastructureRef: { apiVersion: POD_MACHINE.apiVersion, kind: 'pod machine' } },
      }),
      expect: [/spec\.infrastructureRef\.name: Required value/, /spec\.infrastructureRef\.kind/],
    },
    {
      what: 'an empty image',
      obj: () => ({ ...base(), spec: { ...base().spec, image: '' } }),
      expect: [/spec\.image/],
    },
    {
      what: 'a size that is not a quantity',
      obj: () => withVolumes([{ name: 'data', size: 'lots', mountPath: '/data' }]),
      expect: [/spec\.volumes\[0\]\.size/, /should match/],
    },
    {
      what: 'a zero size',
      obj: () => withVolumes([{ name: 'data', size: '0', mountPath: '/data' }]),
      expect: [/spec\.volumes\[0\]\.size/, /size must be greater than zero/],
    },
    {
      what: 'a volume name that is not a DNS label',
      obj: () => withVolumes([{ name: 'Data_1', size: '1Gi', mountPath: '/data' }]),
      expect: [/spec\.volumes\[0\]\.name/],
    },
    {
      what: 'a relative mountPath',
      obj: () => withVolumes([{ name: 'data', size: '1Gi', mountPath: 'data' }]),
      expect: [/spec\.volumes\[0\]\.mountPath/],
    },
    {
      what: 'two volumes on one mountPath',
      obj: () =>
        withVolumes([
          { name: 'a', size: '1Gi', mountPath: '/data' },
          { name: 'b', size: '1Gi', mountPath: '/data' },
        ]),
      expect: [/spec\.volumes/, /mountPath must be unique across volumes/],
    },
    {
      what: 'two volumes of one name',
      obj: () =>
        withVolumes([
          { name: 'a', size: '1Gi', mountPath: '/a' },
          { name: 'a', size: '1Gi', mountPath: '/b' },
        ]),
      expect: [/spec\.volumes\[1\]/, /Duplicate value/],
    },
    {
      what: 'an unknown backup policy',
      obj: () => ({ ...base(), spec: { ...base().spec, backup: { policy: 'Sometimes' } } }),
      expect: [/spec\.backup\.policy/, /Unsupported value: "Sometimes"/, /"OnDelete", "None"/],
    },
    {
      what: 'an image longer than 4096 characters, and more than 256 args',
      obj: () => ({
        ...base(),
        spec: {
          ...base().spec,
          image: `registry.example.com/${'i'.repeat(4096)}`,
          args: Array(257).fill('a'),
        },
      }),
      expect: [/spec\.image: Too long: .*4096/, /spec\.args: Too many: .*must have at most 256 items/],
    },
    {
      what: 'a restoreFrom without its volume',
      obj: () =>
        withVolumes([{ name: 'data', size: '1Gi', mountPath: '/data', restoreFrom: { volumeBackup: 'b' } }]),
      expect: [/spec\.volumes\[0\]\.restoreFrom\.volume: Required value/],
    },
  ];

  for (const c of cases) {
    it(`rejects ${c.what}`, async () => {
      const obj = c.obj() as Machine;
      obj.metadata = { name: `bad-${cases.indexOf(c)}`, namespace: ns };
      const { code, message } = await rejection(client, obj);
      assert.equal(code, 422, message);
      for (const pattern of c.expect) assert.match(message, pattern);
    });
  }

  /** The rejection of a merge patch of Machine `name`'s spec, as a message. */
  async function refusedEdit(name: string, spec: Record<string, unknown>): Promise<string> {
    try {
      await client.patch(MACHINE, { namespace: ns, name, patchType: 'merge', body: { spec } });
    } catch (err) {
      assert.ok(err instanceof ApiError);
      assert.equal(err.statusCode, 422, err.message);
      return err.message;
    }
    assert.fail(`the API server accepted the edit ${JSON.stringify(spec)}`);
  }

  it('rejects edits of what the PodMachine was made from, and accepts a backup policy change', async () => {
    await client.create(
      MACHINE,
      machine(ns, 'fixed', { volumes: [{ name: 'data', size: '1Gi', mountPath: '/data' }] }),
    );
    assert.match(
      await refusedEdit('fixed', { volumes: [{ name: 'data', size: '2Gi', mountPath: '/data' }] }),
      /spec\.volumes: Invalid value.*volumes are immutable after creation/,
    );
    const immutable =
      /image, command and args are immutable after creation: the PodMachine made from them is never rewritten/;
    assert.match(await refusedEdit('fixed', { image: 'registry.k8s.io/pause:3.10.2' }), immutable);
    assert.match(await refusedEdit('fixed', { command: ['sleep'] }), immutable);
    assert.match(await refusedEdit('fixed', { args: ['3600'] }), immutable);
    // Switching to a reference is refused too: an inline Machine stays one.
    assert.match(
      await refusedEdit('fixed', { image: null, infrastructureRef: podMachineRef('fixed') }),
      immutable,
    );

    const edited = await client.patch(MACHINE, {
      namespace: ns,
      name: 'fixed',
      patchType: 'merge',
      body: { spec: { backup: { policy: 'None' } } },
    });
    assert.equal(edited.spec.backup?.policy, 'None');
  });

  it('rejects a change of infrastructureRef', async () => {
    await client.create(MACHINE, {
      apiVersion: MACHINE.apiVersion,
      kind: MACHINE.kind,
      metadata: { name: 'referencing', namespace: ns },
      spec: { infrastructureRef: podMachineRef('some'), backup: { policy: 'None' } },
    });
    assert.match(
      await refusedEdit('referencing', { infrastructureRef: podMachineRef('other') }),
      /spec\.infrastructureRef: Invalid value.*infrastructureRef is immutable/,
    );
  });

  it('waits with a clear condition for a VolumeBackup to restore from that does not exist', async () => {
    await client.create(
      MACHINE,
      machine(ns, 'orphan', {
        volumes: [
          {
            name: 'data',
            size: '1Gi',
            mountPath: '/data',
            restoreFrom: { volumeBackup: 'no-such-backup', volume: 'data' },
          },
        ],
      }),
    );
    const m = await waitForMachine(client, ns, 'orphan', 'waiting for its VolumeBackup', (x) =>
      /no-such-backup/.test(condition(x, 'Ready')?.message ?? ''),
    );
    assert.equal(m.status?.phase, 'Provisioning', 'transient: not Failed');
    assert.equal(condition(m, 'InfrastructureReady')?.reason, 'VolumesNotReady');
    assert.equal(
      condition(m, 'Ready')?.message,
      'PodMachine orphan: volume data restores from VolumeBackup no-such-backup, which does not exist in this namespace; waiting for it to be created',
    );
    const pm = await getPodMachine(client, ns, 'orphan');
    assert.equal(condition(pm, 'VolumesReady')?.reason, 'BackupNotFound');
    assert.equal((await waitForEvent(client, ns, 'PodMachine', 'orphan', 'BackupNotFound')).type, 'Warning');
  });
});
