// Bad input: the API server rejects schema-invalid Machines with readable messages, and a restore
// from a VolumeBackup that does not exist leaves the Machine waiting with a clear condition.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MACHINE, type Machine } from '../../../src/apis/index.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { type MachineSuite, machine, startMachineSuite, stopMachineSuite } from './helpers.ts';

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
      what: 'no image',
      obj: () => ({ ...base(), spec: { volumes: [] } }),
      expect: [/spec\.image: Required value/],
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

  it('rejects a change to the volumes of an existing Machine', async () => {
    await client.create(
      MACHINE,
      machine(ns, 'fixed', { volumes: [{ name: 'data', size: '1Gi', mountPath: '/data' }] }),
    );
    try {
      await client.patch(MACHINE, {
        namespace: ns,
        name: 'fixed',
        patchType: 'merge',
        body: {
          spec: { volumes: [{ name: 'data', size: '2Gi', mountPath: '/data' }] },
        },
      });
      assert.fail('the API server accepted a volume change');
    } catch (err) {
      assert.ok(err instanceof ApiError);
      assert.equal(err.statusCode, 422);
      assert.match(err.message, /spec\.volumes: Invalid value.*volumes are immutable after creation/);
    }
  });
});
