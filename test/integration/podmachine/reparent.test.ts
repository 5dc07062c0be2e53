// An operator upgrade against the local control plane: a Machine's pod and claims as an operator
// before PodMachines left them (controlled by the Machine), then a PodMachine of the Machine's name,
// controlled by it, as the Machine controller now creates it. The PodMachine controller takes them
// over with guarded JSON Patches: the same pod (uid) keeps running, the claims keep their volumes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  CREATED_FOR_ANNOTATION,
  MACHINE,
  type Machine,
  POD_MACHINE,
  type PodMachine,
} from '../../../src/apis/index.ts';
import { desiredClaim, desiredPod } from '../../../src/controllers/podmachine/logic/children.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { controllerReference } from '../../../src/runtime/write/owner-refs.ts';
import { type OperatorSuite, stopOperatorSuite } from '../../support/suite.ts';
import { isReady, podMachine, startPodMachineSuite, waitForEvent, waitForPodMachine } from './helpers.ts';

describe('PodMachine takes over the children of a Machine from before PodMachines', () => {
  let suite: OperatorSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    // Only the PodMachine controller runs: the Machine is a plain object here.
    suite = await startPodMachineSuite('podmachine-upgrade', 4);
    ({ client, ns } = suite);
  });
  after(() => stopOperatorSuite(suite));

  it('re-parents the running pod and the bound claims, neither recreating nor orphaning them', async () => {
    const spec = podMachine(ns, 'web').spec;
    const machine = await client.create<Machine>(MACHINE, {
      apiVersion: MACHINE.apiVersion,
      kind: MACHINE.kind,
      metadata: { name: 'web', namespace: ns },
      spec: { image: spec.image, volumes: spec.volumes, backup: { policy: 'None' } },
    });
    const byMachine = controllerReference(machine, MACHINE);
    /** What the old Machine controller made: our children's shapes, controlled by the Machine. */
    const old = <T extends KubeObject>(obj: T): T => ({
      ...obj,
      metadata: {
        ...obj.metadata,
        labels: {
          'app.kubernetes.io/managed-by': 'basic-operator',
          'infra.basicoperator.dev/machine': 'web',
        },
        ownerReferences: [byMachine],
      },
    });
    // The shapes need an owner with a uid to be built; the references are replaced by old().
    const template: PodMachine = {
      ...podMachine(ns, 'web'),
      metadata: { name: 'web', namespace: ns, uid: 'x' },
    };
    for (const volume of spec.volumes ?? []) {
      await client.create(CoreTypes.PersistentVolumeClaim, old(desiredClaim(template, volume)));
    }
    await client.create(CoreTypes.Pod, old(desiredPod(template)));
    const running = await waitFor('the old pod to run', async () => {
      const pod = await client.get<V1Pod>(CoreTypes.Pod, ns, 'web');
      return pod.status?.phase === 'Running' ? pod : undefined;
    });

    // As the Machine controller makes it: controlled by the Machine, saying that Machine created it.
    await client.create<PodMachine>(POD_MACHINE, {
      ...podMachine(ns, 'web'),
      metadata: {
        name: 'web',
        namespace: ns,
        ownerReferences: [byMachine],
        annotations: { [CREATED_FOR_ANNOTATION]: machine.metadata.uid ?? '' },
      },
    });
    const pm = await waitForPodMachine(client, ns, 'web', 'Ready', isReady);

    const pod = await client.get<V1Pod>(CoreTypes.Pod, ns, 'web');
    assert.equal(pod.metadata?.uid, running.metadata?.uid, 'the same pod, never recreated');
    const mine = { kind: 'PodMachine', uid: pm.metadata.uid, controller: true };
    const ownerOf = (obj: KubeObject) =>
      obj.metadata?.ownerReferences?.map((r) => ({ kind: r.kind, uid: r.uid, controller: r.controller }));
    assert.deepEqual(ownerOf(pod), [mine]);
    assert.equal(pod.metadata?.labels?.['infra.basicoperator.dev/podmachine'], 'web');
    assert.equal(pod.metadata?.labels?.['infra.basicoperator.dev/machine'], 'web', 'the old label stays');
    for (const name of ['web-data', 'web-logs']) {
      const claim = await client.get<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim, ns, name);
      assert.deepEqual(ownerOf(claim), [mine]);
      assert.equal(claim.status?.phase, 'Bound');
    }
    await waitForEvent(client, ns, 'web', 'Reparented');
    // The PodMachine's label, added on the take-over, makes the cache keep the pod's IPs.
    const withAddresses = await waitForPodMachine(client, ns, 'web', 'addresses', (p) =>
      Boolean(p.status?.addresses?.length),
    );
    assert.deepEqual(
      withAddresses.status?.addresses,
      pod.status?.podIPs?.map((p) => ({ type: 'InternalIP', address: p.ip })),
    );

    // Now the PodMachine's: deleting it takes them with it (and they no longer hang on the Machine).
    await client.delete(POD_MACHINE, ns, 'web');
    await waitFor('the pod and claims to be collected with the PodMachine', async () => {
      const pods = (await client.list<V1Pod>(CoreTypes.Pod, { namespace: ns })).items;
      const claims = (
        await client.list<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim, { namespace: ns })
      ).items;
      return pods.length === 0 && claims.length === 0;
    });
  });
});
