// Objects of someone else that hold the name of a Machine's claim or pod. The operator's cache holds
// only objects with its managed-by label, so it cannot see them: the AlreadyExists on create has to
// be looked into, or the Machine would be requeued forever with nothing on it to say why.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { MACHINE } from '../../../src/apis/index.ts';
import { registerMachineController } from '../../../src/controllers/machine/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { OPERATOR_DEFAULTS } from '../../support/operator-options.ts';
import { type OperatorSuite, startOperatorSuite } from '../../support/suite.ts';
import { condition, machine, prepareCluster, stopMachineSuite, waitForMachine } from './helpers.ts';

describe('a Machine whose claim or pod name is taken by an object without our label', () => {
  let suite: OperatorSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    await prepareCluster(4);
    suite = await startOperatorSuite('machine-clash', (m) => registerMachineController(m, OPERATOR_DEFAULTS));
    ({ client, ns } = suite);
  });
  after(() => stopMachineSuite(suite));

  it('reports ClaimConflict for a foreign claim of its claim name', async () => {
    await client.create<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'clash-data', namespace: ns },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    await client.create(
      MACHINE,
      machine(ns, 'clash', {
        volumes: [{ name: 'data', size: '1Gi', mountPath: '/data' }],
        backup: { policy: 'None' },
      }),
    );
    const m = await waitForMachine(
      client,
      ns,
      'clash',
      'Failed',
      (x) => x.status?.phase === 'Failed',
      30_000,
    );
    assert.equal(condition(m, 'VolumesReady')?.reason, 'ClaimConflict');
    assert.match(condition(m, 'Ready')?.message ?? '', /claim clash-data exists and is not controlled/);
  });

  it('reports PodConflict for a foreign pod of its name', async () => {
    await client.create<V1Pod>(CoreTypes.Pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'podclash', namespace: ns },
      spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
    });
    await client.create(MACHINE, machine(ns, 'podclash', { volumes: [], backup: { policy: 'None' } }));
    const m = await waitForMachine(
      client,
      ns,
      'podclash',
      'Failed',
      (x) => x.status?.phase === 'Failed',
      30_000,
    );
    assert.equal(condition(m, 'Ready')?.reason, 'PodConflict');
    assert.match(condition(m, 'Ready')?.message ?? '', /pod podclash exists and is not controlled/);
  });
});
