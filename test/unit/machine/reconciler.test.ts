// reconcile() of the Machine controller against a fake API server (which serves discovery) and real
// informers filled from it: the PodMachine it makes for an inline Machine, the provider objects it
// owns and mirrors through the contract, each bad input (a condition, one Warning Event, a bounded
// Result), which events wake which Machine, and the order of the deletion handshake.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import {
  MACHINE,
  MACHINE_FINALIZER,
  type Machine,
  POD_MACHINE,
  STOP_REQUESTED_ANNOTATION,
  VOLUME_BACKUP_FINALIZER,
} from '../../../src/apis/index.ts';
import { CONTROLLER_NAME } from '../../../src/controllers/machine/index.ts';
import { adoptionPatch } from '../../../src/controllers/machine/logic/adoption.ts';
import { desiredPodMachine } from '../../../src/controllers/machine/logic/inline.ts';
import { MachineReconciler } from '../../../src/controllers/machine/reconciler.ts';
import { crdRequests, providerRequests } from '../../../src/controllers/machine/requests.ts';
import type { Informer } from '../../../src/runtime/cache/informer.ts';
import { ResourceDiscovery } from '../../../src/runtime/client/discovery.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import type { KubeObject, Unstructured } from '../../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../../../src/runtime/client/resource.ts';
import { KindWatches, type WatchTarget } from '../../../src/runtime/controller/kind-watches.ts';
import type { MapFunc } from '../../../src/runtime/controller/watch.ts';
import { eventsFor } from '../../../src/runtime/events/index.ts';
import { findCondition } from '../../../src/runtime/write/conditions.ts';
import { addFinalizerPatch } from '../../../src/runtime/write/finalizers.ts';
import { controllerReference } from '../../../src/runtime/write/owner-refs.ts';
import type { Action } from '../../support/fake/client.ts';
import { FakeCluster } from '../../support/fake/cluster.ts';
import { type Harness, harness } from '../../support/fake/harness.ts';
import {
  adoptableBy,
  CLOUD_MACHINE,
  cloudMachine,
  cloudRef,
  crdOf,
  machine,
  POD_MACHINE_CRD,
  referencing,
} from './fixtures.ts';

const NOW = new Date('2026-01-01T12:00:00Z');
const NO_BACKUP = { backup: { policy: 'None' as const } };

/** Which Machines the watches' events would enqueue, as the running controller would. */
class Wakes implements WatchTarget {
  #requests: string[] = [];

  watch<U extends KubeObject>(informer: Informer<U>, map: MapFunc<U>): void {
    const record = (obj: U) => {
      for (const r of map(obj)) this.#requests.push(`${r.namespace}/${r.name}`);
    };
    informer.addHandler({
      onAdd: record,
      onUpdate: (oldObj, newObj) => {
        record(oldObj);
        record(newObj);
      },
      onDelete: record,
    });
  }

  /** The Machines woken since the last call, each once. */
  take(): string[] {
    const woken = [...new Set(this.#requests)].sort();
    this.#requests = [];
    return woken;
  }
}

interface Setup {
  h: Harness<Machine>;
  cluster: FakeCluster;
  wakes: Wakes;
  /** Moves the discovery cache's clock on. */
  advance(ms: number): void;
}

/** The CRDs installed unless a test says otherwise: PodMachine's and CloudMachine's, both with the contract. */
const STANDARD_CRDS = [POD_MACHINE_CRD, crdOf(CLOUD_MACHINE, 'v1')];

async function setup(
  machines: Machine[],
  options: { crds?: V1CustomResourceDefinition[]; seed?: (cluster: FakeCluster) => void } = {},
): Promise<Setup> {
  const cluster = new FakeCluster({ now: () => NOW });
  cluster.server.serve(POD_MACHINE, CLOUD_MACHINE);
  cluster.seed(CoreTypes.CustomResourceDefinition, ...(options.crds ?? STANDARD_CRDS));
  cluster.seed(MACHINE, ...machines);
  options.seed?.(cluster);
  const wakes = new Wakes();
  let clock = 0;
  const h = await harness<Machine>(cluster, { for: MACHINE, status: 'apply' }, async (c, events) => {
    const machineInformer = await c.informer(MACHINE);
    const crds = await c.informer<KubeObject>(CoreTypes.CustomResourceDefinition, { metadataOnly: true });
    const discovery = new ResourceDiscovery(c.kubeClient, { now: () => clock });
    const providers = new KindWatches<Unstructured>(c, providerRequests(machineInformer));
    providers.bind(wakes);
    wakes.watch(crds, crdRequests(machineInformer, discovery));
    return new MachineReconciler({
      client: c.kubeClient,
      crds,
      discovery,
      providers,
      events: eventsFor(events, CONTROLLER_NAME, MACHINE),
      now: () => NOW,
    });
  });
  wakes.take();
  return { h, cluster, wakes, advance: (ms) => (clock += ms) };
}

/** `m` carrying our finalizer (and `others`), as after its first reconcile. */
function held(m: Machine, ...others: string[]): Machine {
  return { ...m, metadata: { ...m.metadata, finalizers: [MACHINE_FINALIZER, ...others] } };
}

/** `m` being deleted, held by these finalizers. */
function deleting(m: Machine, ...finalizers: string[]): Machine {
  return { ...m, metadata: { ...m.metadata, finalizers, deletionTimestamp: NOW } };
}

/** Ours: controlled by the Machine of the fixtures. */
const ownedBy = (m: Machine) => ({ ownerReferences: [controllerReference(m, MACHINE)] });

const condition = (h: Harness<Machine>, type: string, name = 'web') =>
  findCondition(h.status.last(name)?.conditions, type);

/** `reason: message` of InfrastructureReady. */
const infrastructure = (h: Harness<Machine>, name = 'web') => {
  const c = condition(h, 'InfrastructureReady', name);
  return c ? `${c.status} ${c.reason}: ${c.message}` : undefined;
};

function setStatus(cluster: FakeCluster, type: ResourceType, name: string, status: Record<string, unknown>) {
  cluster.server.patch(type, {
    namespace: 'ns',
    name,
    patchType: 'merge',
    body: { status },
    subresource: 'status',
  });
}

const readyCondition = (
  status: 'True' | 'False',
  reason: string,
  message: string,
  observedGeneration = 1,
) => ({
  type: 'Ready',
  status,
  reason,
  message,
  observedGeneration,
  lastTransitionTime: '2026-01-01T11:00:00Z',
});

/** Every op of every JSON Patch to the Machine touches metadata only: its spec is never written. */
function assertMetadataOnly(actions: Action[]): void {
  for (const action of actions.filter((a) => a.kind === 'Machine' && a.verb !== 'get' && a.verb !== 'list')) {
    assert.equal(action.verb, 'patch', `${action.verb} of the Machine`);
    for (const op of action.body as Array<{ path: string }>) assert.match(op.path, /^\/metadata\//);
  }
}

const forbiddenError = (verb: string) =>
  new ApiError(
    403,
    'Forbidden',
    `cloudmachines.cloud.example.dev "vm-1" is forbidden: User "system:serviceaccount:basic-operator-system:basic-operator" cannot ${verb} resource "cloudmachines" in API group "cloud.example.dev" in the namespace "ns"`,
  );

describe('MachineReconciler: an inline Machine', () => {
  it('adds its finalizer first, then creates the PodMachine of its name from its inline fields', async () => {
    const m = machine({ ...NO_BACKUP, command: ['sleep'], args: ['3600'] });
    const { h, cluster } = await setup([m]);
    const before = cluster.server.get(MACHINE, 'ns', 'web');
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['patch Machine web', 'create PodMachine web']);
    const [finalizer, create] = h.client.writes();
    assert.deepEqual(finalizer?.body, addFinalizerPatch(before, MACHINE_FINALIZER));
    assert.deepEqual(create?.body, desiredPodMachine(m));
    assertMetadataOnly(h.client.actions);
    assert.deepEqual(h.eventSummary(), ['Normal InfrastructureCreated']);
    const status = h.status.last('web');
    assert.deepEqual(status?.infrastructureRef, {
      apiVersion: 'infra.basicoperator.dev/v1alpha1',
      kind: 'PodMachine',
      name: 'web',
    });
    assert.equal(status?.phase, 'Provisioning');
    assert.equal(infrastructure(h), 'False WaitingForInfrastructure: PodMachine web: not ready yet');
    assert.equal(condition(h, 'Ready')?.reason, 'WaitingForInfrastructure');

    h.client.clearActions();
    await cluster.sync();
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), [], 'nothing more to do until the provider reports');
  });

  it('backup policy OnDelete: the finalizer, and nothing created until the backup finalizer is there', async () => {
    const { h, cluster, wakes } = await setup([machine()]);
    assert.equal(await h.reconcile('web'), undefined, 'the backup finalizer arriving wakes it: no requeue');
    assert.deepEqual(h.client.writeSummary(), ['patch Machine web']);
    assert.equal(h.status.last('web')?.phase, 'Pending');
    assert.match(
      infrastructure(h) ?? '',
      /^False WaitingForBackupFinalizer: .*infra\.basicoperator\.dev\/volume-backup/,
    );
    assert.equal(h.status.last('web')?.infrastructureRef, undefined);
    assert.deepEqual(h.eventSummary(), []);

    cluster.server.patch(MACHINE, {
      namespace: 'ns',
      name: 'web',
      patchType: 'json',
      body: [{ op: 'add', path: '/metadata/finalizers/-', value: VOLUME_BACKUP_FINALIZER }],
    });
    await cluster.sync();
    wakes.take();
    h.client.clearActions();
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['create PodMachine web']);
  });

  it('a Machine waiting for the backup finalizer is not woken by a CRD change of its group; once held, it is', async () => {
    const { h, cluster, wakes } = await setup([machine()]);
    await h.reconcile('web');
    const touchCrd = async () => {
      cluster.server.patch(CoreTypes.CustomResourceDefinition, {
        namespace: undefined,
        name: POD_MACHINE_CRD.metadata?.name ?? '',
        patchType: 'merge',
        body: { metadata: { labels: { touched: String(Date.now()) } } },
      });
      await cluster.sync();
    };
    wakes.take();
    await touchCrd();
    assert.deepEqual(wakes.take(), [], 'it reads nothing of its provider kind while it waits');

    cluster.server.patch(MACHINE, {
      namespace: 'ns',
      name: 'web',
      patchType: 'json',
      body: [{ op: 'add', path: '/metadata/finalizers/-', value: VOLUME_BACKUP_FINALIZER }],
    });
    await cluster.sync();
    wakes.take();
    await touchCrd();
    assert.deepEqual(wakes.take(), ['ns/web']);
  });

  it("mirrors the PodMachine's readiness, reason and message, and copies providerID, addresses and volumes", async () => {
    const m = held(machine(NO_BACKUP));
    const { h, cluster, wakes } = await setup([m], {
      seed: (c) =>
        c.seed(POD_MACHINE, {
          ...desiredPodMachine(m),
          status: {
            ready: true,
            providerID: 'pod://ns/web',
            addresses: [{ type: 'InternalIP', address: '10.244.0.7' }],
            volumes: [
              { name: 'data', claimName: 'web-data', phase: 'Bound' },
              { name: 'logs', claimName: 'web-logs', phase: 'Bound' },
            ],
            conditions: [readyCondition('True', 'PodReady', 'pod web is running and ready')],
          },
        }),
    });
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), []);
    const status = h.status.last('web');
    assert.equal(status?.phase, 'Running');
    assert.equal(status?.ready, true);
    assert.equal(status?.providerID, 'pod://ns/web');
    assert.deepEqual(status?.addresses, [{ type: 'InternalIP', address: '10.244.0.7' }]);
    assert.deepEqual(status?.volumes, [
      { name: 'data', claimName: 'web-data', phase: 'Bound' },
      { name: 'logs', claimName: 'web-logs', phase: 'Bound' },
    ]);
    assert.equal(infrastructure(h), 'True PodReady: PodMachine web: pod web is running and ready');
    assert.equal(condition(h, 'Ready')?.status, 'True');
    assert.deepEqual(h.eventSummary(), ['Normal Running']);

    setStatus(cluster, POD_MACHINE, 'web', {
      ready: false,
      conditions: [readyCondition('False', 'PodNotReady', 'pod web is running but not ready')],
    });
    await cluster.sync();
    assert.deepEqual(wakes.take(), ['ns/web'], "the PodMachine's event wakes its Machine");
    assert.equal(await h.reconcile('web'), undefined);
    assert.equal(h.status.last('web')?.phase, 'Provisioning');
    assert.equal(infrastructure(h), 'False PodNotReady: PodMachine web: pod web is running but not ready');
    assert.deepEqual(
      [condition(h, 'Ready')?.reason, condition(h, 'Ready')?.message],
      ['PodNotReady', 'PodMachine web: pod web is running but not ready'],
      'Ready says what the Machine waits for',
    );
  });

  it('a Ready condition for an older generation is not ready yet', async () => {
    const m = held(machine(NO_BACKUP));
    const { h } = await setup([m], {
      seed: (c) =>
        c.seed(POD_MACHINE, {
          ...desiredPodMachine(m),
          metadata: { ...desiredPodMachine(m).metadata, generation: 2 },
          status: { conditions: [readyCondition('True', 'PodReady', 'ready', 1)] },
        }),
    });
    assert.equal(await h.reconcile('web'), undefined);
    assert.equal(h.status.last('web')?.phase, 'Provisioning');
    assert.match(
      infrastructure(h) ?? '',
      /^False GenerationNotObserved: PodMachine web: the provider has not observed generation 2/,
    );
  });

  it("a terminal failure: Failed, InfrastructureFailed with the provider's reason, one Warning, no retry", async () => {
    const m = held(machine(NO_BACKUP));
    const { h } = await setup([m], {
      seed: (c) =>
        c.seed(POD_MACHINE, {
          ...desiredPodMachine(m),
          status: { failureReason: 'PodFailed', failureMessage: 'container machine exited with code 1' },
        }),
    });
    assert.equal(await h.reconcile('web'), undefined);
    assert.equal(h.status.last('web')?.phase, 'Failed');
    assert.equal(
      infrastructure(h),
      'False InfrastructureFailed: PodMachine web failed: PodFailed: container machine exited with code 1',
    );
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.eventSummary(), ['Warning InfrastructureFailed'], 'once per change of reason');
  });

  it('a PodMachine of its name that it does not control: InfrastructureOwnedByOther, nothing written to it', async () => {
    const m = held(machine(NO_BACKUP));
    const { h } = await setup([m], {
      seed: (c) =>
        c.seed(POD_MACHINE, { ...desiredPodMachine(m), metadata: { name: 'web', namespace: 'ns' } }),
    });
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), []);
    assert.equal(h.status.last('web')?.phase, 'Failed');
    assert.match(
      infrastructure(h) ?? '',
      /^False InfrastructureOwnedByOther: PodMachine web was not made for this Machine \(it has no controller\)/,
    );
    assert.deepEqual(h.eventSummary(), ['Warning InfrastructureOwnedByOther']);
  });

  it('AlreadyExists for a PodMachine the cache does not show yet: read live, and used when it is ours', async () => {
    const m = held(machine(NO_BACKUP));
    const { h, cluster } = await setup([m]);
    // The informer (shared with the one the reconciler asks for) lists before the PodMachine exists.
    await cluster.informer(POD_MACHINE);
    cluster.seed(POD_MACHINE, { ...desiredPodMachine(m), status: { ready: true } });
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(
      h.client.actions
        .filter((a) => a.kind === 'PodMachine')
        .map((a) => `${a.verb} ${a.error?.reason ?? 'ok'}`),
      ['create AlreadyExists', 'get ok'],
    );
    assert.equal(h.status.last('web')?.phase, 'Running');
  });
});

describe('MachineReconciler: a Machine that references a provider object', () => {
  it('owns it with a JSON Patch guarded by a test of its ownerReferences, then mirrors it', async () => {
    const m = held(referencing(cloudRef()));
    const other = { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', uid: 'cm-uid' };
    const { h, cluster } = await setup([m], {
      seed: (c) =>
        c.seed(
          CLOUD_MACHINE,
          cloudMachine('vm-1', { ready: true }, { ownerReferences: [other], ...adoptableBy('web') }),
        ),
    });
    const before = cluster.server.get(CLOUD_MACHINE, 'ns', 'vm-1');
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['patch CloudMachine vm-1']);
    const patch = h.client.writes()[0];
    assert.equal(patch?.patchType, 'json');
    assert.deepEqual(patch?.body, adoptionPatch(before, m));
    assert.deepEqual(
      ((patch?.body ?? []) as Array<{ op: string; path: string }>).map((op) => `${op.op} ${op.path}`),
      [
        'test /metadata/uid',
        'test /metadata/ownerReferences',
        'add /metadata/ownerReferences/-',
        'test /metadata/annotations/infra.basicoperator.dev~1adoptable-by',
        'remove /metadata/annotations/infra.basicoperator.dev~1adoptable-by',
      ],
    );
    const after = cluster.server.get(CLOUD_MACHINE, 'ns', 'vm-1').metadata;
    assert.deepEqual(after?.ownerReferences, [other, controllerReference(m, MACHINE)]);
    assert.deepEqual(after?.annotations ?? {}, {}, 'the grant is used up');
    assert.deepEqual(h.status.last('web')?.infrastructureRef, cloudRef());
    assert.equal(h.status.last('web')?.phase, 'Running');
    assert.equal(infrastructure(h), 'True InfrastructureReady: CloudMachine vm-1: ready');
    assert.deepEqual(h.eventSummary(), ['Normal InfrastructureOwned', 'Normal Running']);
    assertMetadataOnly(h.client.actions);
  });

  it('an object without a controller that does not name this Machine: InfrastructureNotAdoptable, nothing written; the grant wakes and adopts', async () => {
    const { h, cluster, wakes } = await setup([held(referencing(cloudRef()))], {
      seed: (c) => c.seed(CLOUD_MACHINE, cloudMachine('vm-1', { ready: true })),
    });
    assert.equal(await h.reconcile('web'), undefined, 'no requeue: a change of the object wakes it');
    assert.deepEqual(h.client.writeSummary(), []);
    assert.equal(
      infrastructure(h),
      'False InfrastructureNotAdoptable: CloudMachine vm-1 has no controller and does not say this Machine may adopt it; whoever made it annotates it infra.basicoperator.dev/adoptable-by=web to hand it over',
    );
    assert.deepEqual(h.status.last('web')?.infrastructureRef, cloudRef());
    assert.deepEqual(h.eventSummary(), ['Warning InfrastructureNotAdoptable']);

    cluster.server.patch(CLOUD_MACHINE, {
      namespace: 'ns',
      name: 'vm-1',
      patchType: 'merge',
      body: { metadata: adoptableBy('other') },
    });
    await cluster.sync();
    assert.deepEqual(wakes.take(), ['ns/web']);
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), [], 'granted to another Machine');
    assert.match(infrastructure(h) ?? '', /may be adopted by Machine other, not by this one/);

    cluster.server.patch(CLOUD_MACHINE, {
      namespace: 'ns',
      name: 'vm-1',
      patchType: 'merge',
      body: { metadata: adoptableBy('web') },
    });
    await cluster.sync();
    assert.deepEqual(wakes.take(), ['ns/web']);
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['patch CloudMachine vm-1']);
    assert.equal(infrastructure(h), 'True InfrastructureReady: CloudMachine vm-1: ready');
  });

  it('backup policy OnDelete: the finalizer, and nothing created until the backup finalizer is there', async () => {
    const { h, cluster, wakes } = await setup([machine()]);
    assert.equal(await h.reconcile('web'), undefined, 'the backup finalizer arriving wakes it: no requeue');
    assert.deepEqual(h.client.writeSummary(), ['patch Machine web']);
    assert.equal(h.status.last('web')?.phase, 'Pending');
    assert.match(
      infrastructure(h) ?? '',
      /^False WaitingForBackupFinalizer: .*infra\.basicoperator\.dev\/volume-backup/,
    );
    assert.equal(h.status.last('web')?.infrastructureRef, undefined);
    assert.deepEqual(h.eventSummary(), []);

    cluster.server.patch(MACHINE, {
      namespace: 'ns',
      name: 'web',
      patchType: 'json',
      body: [{ op: 'add', path: '/metadata/finalizers/-', value: VOLUME_BACKUP_FINALIZER }],
    });
    await cluster.sync();
    wakes.take();
    h.client.clearActions();
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['create PodMachine web']);
  });

  it('a Machine waiting for the backup finalizer is not woken by a CRD change of its group; once held, it is', async () => {
    const { h, cluster, wakes } = await setup([machine()]);
    await h.reconcile('web');
    const touchCrd = async () => {
      cluster.server.patch(CoreTypes.CustomResourceDefinition, {
        namespace: undefined,
        name: POD_MACHINE_CRD.metadata?.name ?? '',
        patchType: 'merge',
        body: { metadata: { labels: { touched: String(Date.now()) } } },
      });
      await cluster.sync();
    };
    wakes.take();
    await touchCrd();
    assert.deepEqual(wakes.take(), [], 'it reads nothing of its provider kind while it waits');

    cluster.server.patch(MACHINE, {
      namespace: 'ns',
      name: 'web',
      patchType: 'json',
      body: [{ op: 'add', path: '/metadata/finalizers/-', value: VOLUME_BACKUP_FINALIZER }],
    });
    await cluster.sync();
    wakes.take();
    await touchCrd();
    assert.deepEqual(wakes.take(), ['ns/web']);
  });

  it("mirrors the PodMachine's readiness, reason and message, and copies providerID, addresses and volumes", async () => {
    const m = held(machine(NO_BACKUP));
    const { h, cluster, wakes } = await setup([m], {
      seed: (c) =>
        c.seed(POD_MACHINE, {
          ...desiredPodMachine(m),
          status: {
            ready: true,
            providerID: 'pod://ns/web',
            addresses: [{ type: 'InternalIP', address: '10.244.0.7' }],
            volumes: [
              { name: 'data', claimName: 'web-data', phase: 'Bound' },
              { name: 'logs', claimName: 'web-logs', phase: 'Bound' },
            ],
            conditions: [readyCondition('True', 'PodReady', 'pod web is running and ready')],
          },
        }),
    });
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), []);
    const status = h.status.last('web');
    assert.equal(status?.phase, 'Running');
    assert.equal(status?.ready, true);
    assert.equal(status?.providerID, 'pod://ns/web');
    assert.deepEqual(status?.addresses, [{ type: 'InternalIP', address: '10.244.0.7' }]);
    assert.deepEqual(status?.volumes, [
      { name: 'data', claimName: 'web-data', phase: 'Bound' },
      { name: 'logs', claimName: 'web-logs', phase: 'Bound' },
    ]);
    assert.equal(infrastructure(h), 'True PodReady: PodMachine web: pod web is running and ready');
    assert.equal(condition(h, 'Ready')?.status, 'True');
    assert.deepEqual(h.eventSummary(), ['Normal Running']);

    setStatus(cluster, POD_MACHINE, 'web', {
      ready: false,
      conditions: [readyCondition('False', 'PodNotReady', 'pod web is running but not ready')],
    });
    await cluster.sync();
    assert.deepEqual(wakes.take(), ['ns/web'], "the PodMachine's event wakes its Machine");
    assert.equal(await h.reconcile('web'), undefined);
    assert.equal(h.status.last('web')?.phase, 'Provisioning');
    assert.equal(infrastructure(h), 'False PodNotReady: PodMachine web: pod web is running but not ready');
    assert.deepEqual(
      [condition(h, 'Ready')?.reason, condition(h, 'Ready')?.message],
      ['PodNotReady', 'PodMachine web: pod web is running but not ready'],
      'Ready says what the Machine waits for',
    );
  });

  it('a Ready condition for an older generation is not ready yet', async () => {
    const m = held(machine(NO_BACKUP));
    const { h } = await setup([m], {
      seed: (c) =>
        c.seed(POD_MACHINE, {
          ...desiredPodMachine(m),
          metadata: { ...desiredPodMachine(m).metadata, generation: 2 },
          status: { conditions: [readyCondition('True', 'PodReady', 'ready', 1)] },
        }),
    });
    assert.equal(await h.reconcile('web'), undefined);
    assert.equal(h.status.last('web')?.phase, 'Provisioning');
    assert.match(
      infrastructure(h) ?? '',
      /^False GenerationNotObserved: PodMachine web: the provider has not observed generation 2/,
    );
  });

  it("a terminal failure: Failed, InfrastructureFailed with the provider's reason, one Warning, no retry", async () => {
    const m = held(machine(NO_BACKUP));
    const { h } = await setup([m], {
      seed: (c) =>
        c.seed(POD_MACHINE, {
          ...desiredPodMachine(m),
          status: { failureReason: 'PodFailed', failureMessage: 'container machine exited with code 1' },
        }),
    });
    assert.equal(await h.reconcile('web'), undefined);
    assert.equal(h.status.last('web')?.phase, 'Failed');
    assert.equal(
      infrastructure(h),
      'False InfrastructureFailed: PodMachine web failed: PodFailed: container machine exited with code 1',
    );
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.eventSummary(), ['Warning InfrastructureFailed'], 'once per change of reason');
  });

  it('a PodMachine of its name that it does not control: InfrastructureOwnedByOther, nothing written to it', async () => {
    const m = held(machine(NO_BACKUP));
    const { h } = await setup([m], {
      seed: (c) =>
        c.seed(POD_MACHINE, { ...desiredPodMachine(m), metadata: { name: 'web', namespace: 'ns' } }),
    });
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), []);
    assert.equal(h.status.last('web')?.phase, 'Failed');
    assert.match(
      infrastructure(h) ?? '',
      /^False InfrastructureOwnedByOther: PodMachine web was not made for this Machine \(it has no controller\)/,
    );
    assert.deepEqual(h.eventSummary(), ['Warning InfrastructureOwnedByOther']);
  });

  it('AlreadyExists for a PodMachine the cache does not show yet: read live, and used when it is ours', async () => {
    const m = held(machine(NO_BACKUP));
    const { h, cluster } = await setup([m]);
    // The informer (shared with the one the reconciler asks for) lists before the PodMachine exists.
    await cluster.informer(POD_MACHINE);
    cluster.seed(POD_MACHINE, { ...desiredPodMachine(m), status: { ready: true } });
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(
      h.client.actions
        .filter((a) => a.kind === 'PodMachine')
        .map((a) => `${a.verb} ${a.error?.reason ?? 'ok'}`),
      ['create AlreadyExists', 'get ok'],
    );
    assert.equal(h.status.last('web')?.phase, 'Running');
  });
});

describe('MachineReconciler: a Machine that references a provider object', () => {
  it('owns it with a JSON Patch guarded by a test of its ownerReferences, then mirrors it', async () => {
    const m = held(referencing(cloudRef()));
    const other = { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', uid: 'cm-uid' };
    const { h, cluster } = await setup([m], {
      seed: (c) =>
        c.seed(
          CLOUD_MACHINE,
          cloudMachine('vm-1', { ready: true }, { ownerReferences: [other], ...adoptableBy('web') }),
        ),
    });
    const before = cluster.server.get(CLOUD_MACHINE, 'ns', 'vm-1');
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['patch CloudMachine vm-1']);
    const patch = h.client.writes()[0];
    assert.equal(patch?.patchType, 'json');
    assert.deepEqual(patch?.body, adoptionPatch(before, m));
    assert.deepEqual(
      ((patch?.body ?? []) as Array<{ op: string; path: string }>).map((op) => `${op.op} ${op.path}`),
      [
        'test /metadata/uid',
        'test /metadata/ownerReferences',
        'add /metadata/ownerReferences/-',
        'test /metadata/annotations/infra.basicoperator.dev~1adoptable-by',
        'remove /metadata/annotations/infra.basicoperator.dev~1adoptable-by',
      ],
    );
    const after = cluster.server.get(CLOUD_MACHINE, 'ns', 'vm-1').metadata;
    assert.deepEqual(after?.ownerReferences, [other, controllerReference(m, MACHINE)]);
    assert.deepEqual(after?.annotations ?? {}, {}, 'the grant is used up');
    assert.deepEqual(h.status.last('web')?.infrastructureRef, cloudRef());
    assert.equal(h.status.last('web')?.phase, 'Running');
    assert.equal(infrastructure(h), 'True InfrastructureReady: CloudMachine vm-1: ready');
    assert.deepEqual(h.eventSummary(), ['Normal InfrastructureOwned', 'Normal Running']);
    assertMetadataOnly(h.client.actions);
  });

  it('an object without a controller that does not name this Machine: InfrastructureNotAdoptable, nothing written; the grant wakes and adopts', async () => {
    const { h, cluster, wakes } = await setup([held(referencing(cloudRef()))], {
      seed: (c) => c.seed(CLOUD_MACHINE, cloudMachine('vm-1', { ready: true })),
    });
    assert.equal(await h.reconcile('web'), undefined, 'no requeue: a change of the object wakes it');
    assert.deepEqual(h.client.writeSummary(), []);
    assert.equal(
      infrastructure(h),
      'False InfrastructureNotAdoptable: CloudMachine vm-1 has no controller and does not say this Machine may adopt it; whoever made it annotates it infra.basicoperator.dev/adoptable-by=web to hand it over',
    );
    assert.deepEqual(h.status.last('web')?.infrastructureRef, cloudRef());
    assert.deepEqual(h.eventSummary(), ['Warning InfrastructureNotAdoptable']);

    cluster.server.patch(CLOUD_MACHINE, {
      namespace: 'ns',
      name: 'vm-1',
      patchType: 'merge',
      body: { metadata: adoptableBy('other') },
    });
    await cluster.sync();
    assert.deepEqual(wakes.take(), ['ns/web']);
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), [], 'granted to another Machine');
    assert.match(infrastructure(h) ?? '', /may be adopted by Machine other, not by this one/);

    cluster.server.patch(CLOUD_MACHINE, {
      namespace: 'ns',
      name: 'vm-1',
      patchType: 'merge',
      body: { metadata: adoptableBy('web') },
    });
    await cluster.sync();
    assert.deepEqual(wakes.take(), ['ns/web']);
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['patch CloudMachine vm-1']);
    assert.equal(infrastructure(h), 'True InfrastructureReady: CloudMachine vm-1: ready');
  });

  it('a grant withdrawn between the read and the patch: the patch fails its test and nothing is owned', async () => {
    const m = held(referencing(cloudRef()));
    const { h, cluster } = await setup([m], {
      seed: (c) => c.seed(CLOUD_MACHINE, cloudMachine('vm-1', undefined, adoptableBy('web'))),
    });
    const cached = cluster.server.get(CLOUD_MACHINE, 'ns', 'vm-1');
    cluster.server.patch(CLOUD_MACHINE, {
      namespace: 'ns',
      name: 'vm-1',
      patchType: 'merge',
      body: { metadata: { annotations: { 'infra.basicoperator.dev/adoptable-by': 'other' } } },
    });
    const patch = adoptionPatch(cached, m) ?? [];
    assert.throws(() =>
      cluster.server.patch(CLOUD_MACHINE, { namespace: 'ns', name: 'vm-1', patchType: 'json', body: patch }),
    );
    assert.equal(cluster.server.get(CLOUD_MACHINE, 'ns', 'vm-1').metadata?.ownerReferences, undefined);
    void h;
  });

  it('backup policy OnDelete: does not own it before the backup finalizer is there', async () => {
    const m = held(referencing(cloudRef(), 'web', { policy: 'OnDelete' }));
    const { h } = await setup([m], { seed: (c) => c.seed(CLOUD_MACHINE, cloudMachine('vm-1')) });
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), []);
    assert.equal(condition(h, 'InfrastructureReady')?.reason, 'WaitingForBackupFinalizer');
  });

  it('a reference to an object that does not exist: InfrastructureNotFound, Pending; its creation wakes the Machine', async () => {
    const { h, cluster, wakes } = await setup([held(referencing(cloudRef()))]);
    assert.equal(await h.reconcile('web'), undefined, 'no requeue: the watch on the kind wakes it');
    assert.equal(h.status.last('web')?.phase, 'Pending');
    assert.equal(
      infrastructure(h),
      'False InfrastructureNotFound: CloudMachine vm-1 (cloud.example.dev/v1) does not exist in namespace ns; waiting for it to be created',
    );
    assert.deepEqual(h.status.last('web')?.infrastructureRef, cloudRef());
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.eventSummary(), ['Warning InfrastructureNotFound'], 'once per change of reason');

    cluster.seed(CLOUD_MACHINE, cloudMachine('vm-1', undefined, adoptableBy('web')));
    await cluster.sync();
    assert.deepEqual(wakes.take(), ['ns/web']);
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['patch CloudMachine vm-1']);
    assert.equal(h.status.last('web')?.phase, 'Provisioning');
  });

  it('a kind whose CRD has no contract label: ContractNotDeclared, Failed; labelling the CRD wakes the Machine', async () => {
    const { h, cluster, wakes } = await setup([held(referencing(cloudRef()))], {
      crds: [POD_MACHINE_CRD, crdOf(CLOUD_MACHINE, undefined)],
      seed: (c) => c.seed(CLOUD_MACHINE, cloudMachine('vm-1', undefined, adoptableBy('web'))),
    });
    assert.equal(await h.reconcile('web'), undefined, 'no requeue: the watch on CRDs wakes it');
    assert.deepEqual(h.client.writeSummary(), [], 'nothing is owned');
    assert.equal(h.status.last('web')?.phase, 'Failed');
    assert.equal(
      infrastructure(h),
      'False ContractNotDeclared: CustomResourceDefinition cloudmachines.cloud.example.dev does not declare the Machine infrastructure contract v1 for version v1: its label machine-contract.infra.basicoperator.dev/v1 must list v1 (it has no such label)',
    );
    assert.deepEqual(h.eventSummary(), ['Warning ContractNotDeclared']);

    cluster.server.patch(CoreTypes.CustomResourceDefinition, {
      namespace: undefined,
      name: 'cloudmachines.cloud.example.dev',
      patchType: 'merge',
      body: { metadata: { labels: { 'machine-contract.infra.basicoperator.dev/v1': 'v1beta1_v1' } } },
    });
    await cluster.sync();
    assert.deepEqual(wakes.take(), ['ns/web']);
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['patch CloudMachine vm-1']);
  });

  it('a contract label that does not list the referenced version: ContractNotDeclared, naming what it lists', async () => {
    const { h } = await setup([held(referencing(cloudRef()))], {
      crds: [POD_MACHINE_CRD, crdOf(CLOUD_MACHINE, 'v1beta1_v2')],
      seed: (c) => c.seed(CLOUD_MACHINE, cloudMachine('vm-1')),
    });
    assert.equal(await h.reconcile('web'), undefined);
    assert.match(
      infrastructure(h) ?? '',
      /^False ContractNotDeclared: .*must list v1 \(it lists v1beta1, v2\)$/,
    );
  });

  it('a kind nobody serves: ContractNotDeclared; discovery is read again at most once a second', async () => {
    const { h, cluster, advance } = await setup([held(referencing(cloudRef()))], { crds: [POD_MACHINE_CRD] });
    cluster.server.unserve(CLOUD_MACHINE);
    assert.equal(await h.reconcile('web'), undefined);
    assert.match(
      infrastructure(h) ?? '',
      /^False ContractNotDeclared: no kind CloudMachine is served in cloud\.example\.dev\/v1/,
    );
    advance(250);
    assert.deepEqual(await h.reconcile('web'), { requeueAfterMs: 750 }, 'a bounded look again');
    advance(750);
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(
      h.client.actions.filter((a) => a.kind === 'Discovery').map((a) => a.name),
      ['/apis/cloud.example.dev/v1', '/apis/cloud.example.dev/v1'],
    );
    assert.deepEqual(h.eventSummary(), ['Warning ContractNotDeclared']);
  });

  it('a built-in kind (no CRD): ContractNotDeclared', async () => {
    const { h, cluster } = await setup([
      held(referencing({ apiVersion: 'v1', kind: 'ConfigMap', name: 'c' })),
    ]);
    cluster.server.serve(CoreTypes.ConfigMap);
    assert.equal(await h.reconcile('web'), undefined);
    assert.match(
      infrastructure(h) ?? '',
      /^False ContractNotDeclared: ConfigMap \(v1\) is not defined by a CustomResourceDefinition/,
    );
  });

  it('a reference to another namespace: CrossNamespaceReference, Failed, and nothing looked up', async () => {
    const { h } = await setup([held(referencing(cloudRef('vm-1', { namespace: 'other' })))]);
    assert.equal(await h.reconcile('web'), undefined, 'only a new Machine fixes it: no retry');
    assert.equal(h.status.last('web')?.phase, 'Failed');
    assert.match(
      infrastructure(h) ?? '',
      /^False CrossNamespaceReference: spec\.infrastructureRef names CloudMachine vm-1 in namespace other/,
    );
    assert.equal(h.status.last('web')?.infrastructureRef, undefined);
    assert.deepEqual(h.client.actions, []);
    assert.deepEqual(h.eventSummary(), ['Warning CrossNamespaceReference']);
  });

  it('an object controlled by another Machine: InfrastructureOwnedByOther, left alone; its changes wake both Machines', async () => {
    const owner = {
      ...machine({}, 'first'),
      metadata: { ...machine({}, 'first').metadata, uid: 'first-uid' },
    };
    const { h, cluster, wakes } = await setup([held(referencing(cloudRef()))], {
      seed: (c) => c.seed(CLOUD_MACHINE, cloudMachine('vm-1', { ready: true }, ownedBy(owner))),
    });
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), []);
    assert.equal(h.status.last('web')?.phase, 'Failed');
    assert.equal(
      infrastructure(h),
      'False InfrastructureOwnedByOther: CloudMachine vm-1 is controlled by Machine first; a provider object serves one Machine. Delete or rename it, or reference another object',
    );
    assert.deepEqual(h.eventSummary(), ['Warning InfrastructureOwnedByOther']);

    setStatus(cluster, CLOUD_MACHINE, 'vm-1', { ready: false });
    await cluster.sync();
    assert.deepEqual(wakes.take(), ['ns/first', 'ns/web']);
  });

  it('a status that breaks the contract: ContractViolation naming the field, Failed, one Warning', async () => {
    const m = held(referencing(cloudRef()));
    const { h } = await setup([m], {
      seed: (c) => c.seed(CLOUD_MACHINE, cloudMachine('vm-1', { ready: 'yes' }, ownedBy(m))),
    });
    assert.equal(await h.reconcile('web'), undefined, "no retry: the provider's next status wakes it");
    assert.equal(h.status.last('web')?.phase, 'Failed');
    assert.equal(
      infrastructure(h),
      'False ContractViolation: CloudMachine vm-1 breaks the Machine infrastructure contract: status.ready must be a boolean; waiting for its provider to fix its status',
    );
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.eventSummary(), ['Warning ContractViolation']);
  });

  it('forbidden to own it: InfrastructureForbidden saying how to grant access, retried with backoff, one Warning', async () => {
    const { h } = await setup([held(referencing(cloudRef()))], {
      seed: (c) => c.seed(CLOUD_MACHINE, cloudMachine('vm-1', undefined, adoptableBy('web'))),
    });
    h.client.fail({ verb: 'patch', kind: 'CloudMachine' }, forbiddenError('patch'));
    assert.deepEqual(await h.reconcile('web'), { requeue: true });
    assert.equal(h.status.last('web')?.phase, 'Failed');
    const message = condition(h, 'InfrastructureReady')?.message ?? '';
    assert.equal(condition(h, 'InfrastructureReady')?.reason, 'InfrastructureForbidden');
    assert.match(message, /cannot patch resource "cloudmachines"/);
    assert.match(message, /ClusterRole labelled infra\.basicoperator\.dev\/aggregate-to-manager: "true"/);
    assert.deepEqual(await h.reconcile('web'), { requeue: true });
    assert.deepEqual(h.eventSummary(), ['Warning InfrastructureForbidden']);
  });

  it('forbidden to read the group (discovery): InfrastructureForbidden, retried with backoff', async () => {
    const { h } = await setup([held(referencing(cloudRef()))]);
    h.client.fail({ kind: 'Discovery' }, new ApiError(403, 'Forbidden', 'forbidden: cannot get path'));
    assert.deepEqual(await h.reconcile('web'), { requeue: true });
    assert.equal(condition(h, 'InfrastructureReady')?.reason, 'InfrastructureForbidden');
  });
});

describe('MachineReconciler: deletion', () => {
  it('stop annotation, wait for stopped, wait for the other finalizers, delete the provider object, then release the Machine', async () => {
    const live = machine();
    const m = deleting(live, MACHINE_FINALIZER, VOLUME_BACKUP_FINALIZER);
    const volumes = [
      { name: 'data', claimName: 'web-data', phase: 'Bound' },
      { name: 'logs', claimName: 'web-logs', phase: 'Bound' },
    ];
    const { h, cluster, wakes } = await setup([m], {
      seed: (c) => c.seed(POD_MACHINE, { ...desiredPodMachine(live), status: { ready: true, volumes } }),
    });
    const podMachineUid = cluster.server.get(POD_MACHINE, 'ns', 'web').metadata?.uid;

    // 1. Ask the provider to stop.
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['patch PodMachine web']);
    assert.equal(h.client.writes()[0]?.patchType, 'merge');
    assert.deepEqual(h.client.writes()[0]?.body, {
      metadata: { annotations: { [STOP_REQUESTED_ANNOTATION]: 'true' } },
    });
    assert.equal(h.status.last('web')?.phase, 'Stopping');
    assert.equal(condition(h, 'Ready')?.reason, 'Stopping');
    assert.deepEqual(h.eventSummary(), ['Normal StopRequested']);

    // 2. Until it reports stopped: nothing more.
    await cluster.sync();
    wakes.take();
    h.client.clearActions();
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), []);
    assert.equal(h.status.last('web')?.phase, 'Stopping');

    // 3. Stopped: the Machine says so (the VolumeBackup controller's signal) and copies the volumes.
    setStatus(cluster, POD_MACHINE, 'web', { ready: false, stopped: true, volumes });
    await cluster.sync();
    assert.deepEqual(wakes.take(), ['ns/web']);
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), [], 'not deleted while the backup finalizer is there');
    assert.equal(h.status.last('web')?.phase, 'Stopped');
    assert.deepEqual(h.status.last('web')?.volumes, volumes);
    assert.match(
      condition(h, 'Ready')?.message ?? '',
      /waiting for the finalizers infra\.basicoperator\.dev\/volume-backup/,
    );
    assert.deepEqual(h.eventSummary(), ['Normal StopRequested', 'Normal Stopped']);

    // 4. The backup is done: only our finalizer is left, so the provider object goes (foreground).
    cluster.server.patch(MACHINE, {
      namespace: 'ns',
      name: 'web',
      patchType: 'merge',
      body: { metadata: { finalizers: [MACHINE_FINALIZER] } },
    });
    await cluster.sync();
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['delete PodMachine web']);
    assert.deepEqual(h.client.writes()[0]?.body, {
      propagationPolicy: 'Foreground',
      preconditions: { uid: podMachineUid },
    });
    assert.equal(h.status.last('web')?.phase, 'Stopped');

    // 5. While it is being deleted: wait, without deleting it again.
    await cluster.sync();
    h.client.clearActions();
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), []);

    // 6. Gone (its dependents gone, the garbage collector drops foregroundDeletion): release the Machine.
    cluster.server.patch(POD_MACHINE, {
      namespace: 'ns',
      name: 'web',
      patchType: 'merge',
      body: { metadata: { finalizers: null } },
    });
    await cluster.sync();
    assert.deepEqual(wakes.take(), ['ns/web'], 'its delete event wakes the Machine');
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['patch Machine web']);
    assert.deepEqual(cluster.server.list(MACHINE), [], 'the Machine is gone');
    assert.deepEqual(h.eventSummary(), [
      'Normal StopRequested',
      'Normal Stopped',
      'Normal InfrastructureDeleted',
    ]);
  });

  it('a provider that breaks the contract while stopping: Stopping with ContractViolation, nothing deleted', async () => {
    const live = held(referencing(cloudRef()));
    const m = deleting(live, MACHINE_FINALIZER);
    const { h } = await setup([m], {
      seed: (c) =>
        c.seed(
          CLOUD_MACHINE,
          cloudMachine(
            'vm-1',
            { stopped: 'yes' },
            { ...ownedBy(live), annotations: { [STOP_REQUESTED_ANNOTATION]: 'true' } },
          ),
        ),
    });
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), []);
    assert.equal(h.status.last('web')?.phase, 'Stopping');
    assert.equal(condition(h, 'InfrastructureReady')?.reason, 'ContractViolation');
    assert.deepEqual(h.eventSummary(), ['Warning ContractViolation']);
  });

  it('no provider object: Stopped, and the finalizer goes once no other is left', async () => {
    const m = deleting(referencing(cloudRef()), MACHINE_FINALIZER, 'example.com/other');
    const { h, cluster } = await setup([m]);
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), []);
    assert.deepEqual(
      h.client.actions.filter((a) => a.kind === 'CloudMachine').map((a) => `${a.verb} ${a.name}`),
      ['get vm-1'],
      'the cache may be behind: it looks live before it concludes there is none',
    );
    assert.equal(h.status.last('web')?.phase, 'Stopped');
    assert.match(
      condition(h, 'Ready')?.message ?? '',
      /CloudMachine vm-1 does not exist; waiting for the finalizers example\.com\/other/,
    );

    cluster.server.patch(MACHINE, {
      namespace: 'ns',
      name: 'web',
      patchType: 'merge',
      body: { metadata: { finalizers: [MACHINE_FINALIZER] } },
    });
    await cluster.sync();
    h.client.clearActions();
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['patch Machine web']);
  });

  it('a provider object it does not control is left alone; the Machine goes', async () => {
    const other = {
      ...machine({}, 'first'),
      metadata: { ...machine({}, 'first').metadata, uid: 'first-uid' },
    };
    const { h } = await setup([deleting(referencing(cloudRef()), MACHINE_FINALIZER)], {
      seed: (c) => c.seed(CLOUD_MACHINE, cloudMachine('vm-1', { ready: true }, ownedBy(other))),
    });
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.writeSummary(), ['patch Machine web']);
  });

  it('without its finalizer (released already): nothing to do', async () => {
    const { h } = await setup([deleting(machine(), 'example.com/other')]);
    assert.equal(await h.reconcile('web'), undefined);
    assert.deepEqual(h.client.actions, []);
    assert.equal(h.status.last('web'), undefined);
  });
});
