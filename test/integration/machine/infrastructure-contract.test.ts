// The Machine controller on the infrastructure contract against the local control plane, with a
// provider kind of the test's own (a CRD labelled with the contract, status set by the test, which
// acts as the provider) and one without the label: ownership, mirrored readiness and copies, the
// deletion handshake, and each bad input (a condition and a Warning Event, never a crash).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { testClient, testCluster, testKubeConfig } from '../../../e2e/support/cluster.ts';
import { installCrds } from '../../../e2e/support/crds.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  ADOPTABLE_BY_ANNOTATION,
  AGGREGATE_TO_MANAGER_LABEL,
  CONTRACT_LABEL,
  type InfrastructureReference,
  MACHINE,
  MACHINE_FINALIZER,
  type Machine,
  STOP_REQUESTED_ANNOTATION,
} from '../../../src/apis/index.ts';
import { operatorManagerOptions } from '../../../src/controllers/index.ts';
import { registerMachineController } from '../../../src/controllers/machine/index.ts';
import { isNotFound } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import type { Unstructured } from '../../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType, resourceOf } from '../../../src/runtime/client/resource.ts';
import { parseConfig } from '../../../src/runtime/manager/config.ts';
import { Manager } from '../../../src/runtime/manager/manager.ts';
import { condition, releaseMachines, waitForEvent, waitForGone, waitForMachine } from './helpers.ts';

const RUN = randomBytes(3).toString('hex');
const GROUP = `mc${RUN}.test.basicoperator.dev`;
const API_VERSION = `${GROUP}/v1`;

const kindOf = (kind: string, plural: string): ResourceType<Unstructured> =>
  resourceOf<Unstructured>()({ group: GROUP, version: 'v1', kind, plural, namespaced: true });
/** Declares the contract for v1. */
const WIDGET = kindOf('WidgetMachine', 'widgetmachines');
/** Declares nothing (until a test labels its CRD). */
const UNLABELLED = kindOf('UnlabelledMachine', 'unlabelledmachines');
/** Only for the operator that may not touch it. */
const LOCKED = kindOf('LockedMachine', 'lockedmachines');

function crdOf(type: ResourceType, labels: Record<string, string> = {}): V1CustomResourceDefinition {
  const open = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${type.plural}.${type.group}`,
      labels: { 'basicoperator.dev/test': 'true', ...labels },
    },
    spec: {
      group: type.group,
      scope: 'Namespaced',
      names: { kind: type.kind, plural: type.plural, listKind: `${type.kind}List` },
      versions: [
        {
          name: type.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: open, status: open } } },
        },
      ],
    },
  };
}

const CONTRACT = { [CONTRACT_LABEL]: 'v1' };

async function installTestCrds(client: KubeClient): Promise<void> {
  for (const crd of [crdOf(WIDGET, CONTRACT), crdOf(UNLABELLED), crdOf(LOCKED, CONTRACT)]) {
    await client.create(CoreTypes.CustomResourceDefinition, crd);
  }
  for (const type of [WIDGET, UNLABELLED, LOCKED]) {
    await waitFor(`CRD ${type.plural} to be served`, async () => {
      const crd = await client.get(
        CoreTypes.CustomResourceDefinition,
        undefined,
        `${type.plural}.${type.group}`,
      );
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    });
  }
}

async function deleteTestCrds(client: KubeClient): Promise<void> {
  for (const type of [WIDGET, UNLABELLED, LOCKED]) {
    await client
      .delete(CoreTypes.CustomResourceDefinition, undefined, `${type.plural}.${type.group}`)
      .catch(() => undefined);
  }
}

const ref = (type: ResourceType, name: string, extra: Partial<InfrastructureReference> = {}) => ({
  apiVersion: API_VERSION,
  kind: type.kind,
  name,
  ...extra,
});

function referencing(ns: string, name: string, infrastructureRef: InfrastructureReference): Machine {
  return {
    apiVersion: MACHINE.apiVersion,
    kind: MACHINE.kind,
    metadata: { name, namespace: ns },
    spec: { infrastructureRef, backup: { policy: 'None' } },
  };
}

/** A provider object made by hand, which Machine `adoptableBy` may adopt (ADOPTABLE_BY_ANNOTATION). */
async function createProvider(
  client: KubeClient,
  type: ResourceType<Unstructured>,
  ns: string,
  name: string,
  adoptableBy?: string,
) {
  return client.create(type, {
    apiVersion: API_VERSION,
    kind: type.kind,
    metadata: {
      name,
      namespace: ns,
      ...(adoptableBy ? { annotations: { [ADOPTABLE_BY_ANNOTATION]: adoptableBy } } : {}),
    },
    spec: { size: 'small' },
  });
}

/** The test acting as the provider: it writes the object's status. */
async function setStatus(
  client: KubeClient,
  type: ResourceType<Unstructured>,
  ns: string,
  name: string,
  status: Record<string, unknown>,
) {
  await client.patch(type, {
    namespace: ns,
    name,
    patchType: 'merge',
    body: { status },
    subresource: 'status',
  });
}

async function getProvider(client: KubeClient, type: ResourceType<Unstructured>, ns: string, name: string) {
  try {
    return await client.get(type, ns, name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

const reasonIs = (reason: string) => (m: Machine) => condition(m, 'InfrastructureReady')?.reason === reason;

let admin: KubeClient | undefined;

// The provider kinds are cluster-wide: made for this file, with a group of its own, and removed after.
before(async () => {
  await installCrds();
  admin = await testClient();
  await installTestCrds(admin);
});

after(async () => {
  if (admin) await deleteTestCrds(admin);
});

describe('Machine controller on the infrastructure contract', () => {
  let client: KubeClient;
  let ns: string;
  let manager: Manager | undefined;

  before(async () => {
    client = await testClient();
    ns = await createNamespace(client, 'machine-contract');
    manager = await startManager([ns], await testKubeConfig());
  });

  after(async () => {
    await manager?.stop();
    if (client && ns) {
      await releaseMachines(client, ns);
      await deleteNamespace(client, ns);
    }
  });

  it('owns the object, mirrors its readiness, copies its fields, and on deletion runs the handshake', async () => {
    await createProvider(client, WIDGET, ns, 'w1', 'm1');
    const created = await client.create(MACHINE, referencing(ns, 'm1', ref(WIDGET, 'w1')));
    const provisioning = await waitForMachine(
      client,
      ns,
      'm1',
      'Provisioning',
      (m) => m.status?.phase === 'Provisioning',
    );
    assert.ok(provisioning.metadata.finalizers?.includes(MACHINE_FINALIZER));
    assert.equal(condition(provisioning, 'InfrastructureReady')?.reason, 'WaitingForInfrastructure');
    assert.equal(provisioning.status?.infrastructureRef?.kind, 'WidgetMachine');
    const owned = await getProvider(client, WIDGET, ns, 'w1');
    assert.deepEqual(
      owned?.metadata?.ownerReferences?.map((r) => `${r.kind} ${r.name} ${r.uid} ${r.controller}`),
      [`Machine m1 ${created.metadata.uid} true`],
    );

    const volumes = [{ name: 'data', claimName: 'w1-data', phase: 'Bound' }];
    await setStatus(client, WIDGET, ns, 'w1', {
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'WidgetUp',
          message: 'the widget runs',
          observedGeneration: 1,
          lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        },
      ],
      providerID: 'widget://w1',
      addresses: [{ type: 'InternalIP', address: '10.1.2.3' }],
      volumes,
    });
    const running = await waitForMachine(client, ns, 'm1', 'Running', (m) => m.status?.phase === 'Running');
    assert.equal(running.status?.ready, true);
    assert.equal(running.status?.providerID, 'widget://w1');
    assert.deepEqual(running.status?.addresses, [{ type: 'InternalIP', address: '10.1.2.3' }]);
    assert.deepEqual(running.status?.volumes, volumes);
    assert.equal(condition(running, 'InfrastructureReady')?.message, 'WidgetMachine w1: the widget runs');
    assert.equal(condition(running, 'Ready')?.status, 'True');

    await client.delete(MACHINE, ns, 'm1');
    await waitFor('the stop annotation on w1', async () => {
      const w = await getProvider(client, WIDGET, ns, 'w1');
      return w?.metadata?.annotations?.[STOP_REQUESTED_ANNOTATION] === 'true';
    });
    await waitForMachine(client, ns, 'm1', 'Stopping', (m) => m.status?.phase === 'Stopping');
    assert.ok(await getProvider(client, WIDGET, ns, 'w1'), 'not deleted before it reports stopped');
    await setStatus(client, WIDGET, ns, 'w1', { stopped: true });
    // Foreground: the garbage collector finalizes it, once it watches the new kind (up to 30 s).
    await waitForGone(client, ns, 'm1', 90_000);
    assert.equal(await getProvider(client, WIDGET, ns, 'w1'), undefined, 'the provider object went first');
  });

  it('a reference to an object that does not exist: InfrastructureNotFound and an Event, until it is created', async () => {
    await client.create(MACHINE, referencing(ns, 'm2', ref(WIDGET, 'w2')));
    const pending = await waitForMachine(
      client,
      ns,
      'm2',
      'InfrastructureNotFound',
      reasonIs('InfrastructureNotFound'),
    );
    assert.equal(pending.status?.phase, 'Pending');
    await waitForEvent(client, ns, 'Machine', 'm2', 'InfrastructureNotFound');
    await createProvider(client, WIDGET, ns, 'w2', 'm2');
    await waitForMachine(
      client,
      ns,
      'm2',
      'the provider object owned',
      (m) => m.status?.phase === 'Provisioning',
    );
    const w2 = await getProvider(client, WIDGET, ns, 'w2');
    assert.equal(w2?.metadata?.ownerReferences?.[0]?.name, 'm2');
  });

  it('a kind whose CRD has no contract label: ContractNotDeclared and an Event; labelling the CRD lets it through', async () => {
    await createProvider(client, UNLABELLED, ns, 'u1', 'm3');
    await client.create(MACHINE, referencing(ns, 'm3', ref(UNLABELLED, 'u1')));
    const failed = await waitForMachine(
      client,
      ns,
      'm3',
      'ContractNotDeclared',
      reasonIs('ContractNotDeclared'),
    );
    assert.equal(failed.status?.phase, 'Failed');
    assert.match(
      condition(failed, 'InfrastructureReady')?.message ?? '',
      new RegExp(`unlabelledmachines\\.${GROUP.replaceAll('.', '\\.')}`),
    );
    await waitForEvent(client, ns, 'Machine', 'm3', 'ContractNotDeclared');
    assert.equal((await getProvider(client, UNLABELLED, ns, 'u1'))?.metadata?.ownerReferences, undefined);

    await client.patch(CoreTypes.CustomResourceDefinition, {
      namespace: undefined,
      name: `${UNLABELLED.plural}.${GROUP}`,
      patchType: 'merge',
      body: { metadata: { labels: CONTRACT } },
    });
    await waitForMachine(
      client,
      ns,
      'm3',
      'Provisioning once the CRD declares the contract',
      (m) => m.status?.phase === 'Provisioning',
    );
  });

  it('a reference to another namespace: CrossNamespaceReference and an Event', async () => {
    await client.create(MACHINE, referencing(ns, 'm4', ref(WIDGET, 'w4', { namespace: 'default' })));
    const failed = await waitForMachine(
      client,
      ns,
      'm4',
      'CrossNamespaceReference',
      reasonIs('CrossNamespaceReference'),
    );
    assert.equal(failed.status?.phase, 'Failed');
    await waitForEvent(client, ns, 'Machine', 'm4', 'CrossNamespaceReference');
  });

  it('an object another Machine owns: InfrastructureOwnedByOther and an Event, the object left to its owner', async () => {
    await createProvider(client, WIDGET, ns, 'w5', 'm5a');
    const first = await client.create(MACHINE, referencing(ns, 'm5a', ref(WIDGET, 'w5')));
    await waitFor('m5a to own w5', async () =>
      (await getProvider(client, WIDGET, ns, 'w5'))?.metadata?.ownerReferences?.some(
        (r) => r.uid === first.metadata.uid,
      ),
    );
    await client.create(MACHINE, referencing(ns, 'm5b', ref(WIDGET, 'w5')));
    const failed = await waitForMachine(
      client,
      ns,
      'm5b',
      'InfrastructureOwnedByOther',
      reasonIs('InfrastructureOwnedByOther'),
    );
    assert.match(condition(failed, 'InfrastructureReady')?.message ?? '', /controlled by Machine m5a/);
    await waitForEvent(client, ns, 'Machine', 'm5b', 'InfrastructureOwnedByOther');
    assert.equal((await getProvider(client, WIDGET, ns, 'w5'))?.metadata?.ownerReferences?.length, 1);
  });

  it('an object that does not name the Machine: InfrastructureNotAdoptable and an Event, never owned; the grant, once given, is used up', async () => {
    await createProvider(client, WIDGET, ns, 'w8');
    await client.create(MACHINE, referencing(ns, 'm8', ref(WIDGET, 'w8')));
    const refused = await waitForMachine(
      client,
      ns,
      'm8',
      'InfrastructureNotAdoptable',
      reasonIs('InfrastructureNotAdoptable'),
    );
    assert.match(
      condition(refused, 'InfrastructureReady')?.message ?? '',
      /WidgetMachine w8 has no controller and does not say this Machine may adopt it; whoever made it annotates it infra\.basicoperator\.dev\/adoptable-by=m8/,
    );
    await waitForEvent(client, ns, 'Machine', 'm8', 'InfrastructureNotAdoptable');
    assert.equal((await getProvider(client, WIDGET, ns, 'w8'))?.metadata?.ownerReferences, undefined);

    await client.patch(WIDGET, {
      namespace: ns,
      name: 'w8',
      patchType: 'merge',
      body: { metadata: { annotations: { [ADOPTABLE_BY_ANNOTATION]: 'm8' } } },
    });
    const owned = await waitFor('m8 to own w8', async () => {
      const obj = await getProvider(client, WIDGET, ns, 'w8');
      return obj?.metadata?.ownerReferences?.some((r) => r.controller && r.name === 'm8') ? obj : undefined;
    });
    assert.equal(owned.metadata?.annotations?.[ADOPTABLE_BY_ANNOTATION], undefined, 'the grant is used up');
  });

  it('a status that breaks the contract: ContractViolation and an Event, until the provider fixes it', async () => {
    await createProvider(client, WIDGET, ns, 'w6', 'm6');
    await setStatus(client, WIDGET, ns, 'w6', { ready: 'yes' });
    await client.create(MACHINE, referencing(ns, 'm6', ref(WIDGET, 'w6')));
    const failed = await waitForMachine(client, ns, 'm6', 'ContractViolation', reasonIs('ContractViolation'));
    assert.match(condition(failed, 'InfrastructureReady')?.message ?? '', /status\.ready must be a boolean/);
    await waitForEvent(client, ns, 'Machine', 'm6', 'ContractViolation');
    await setStatus(client, WIDGET, ns, 'w6', { ready: true });
    await waitForMachine(client, ns, 'm6', 'Running', (m) => m.status?.phase === 'Running');
  });
});

describe('Machine controller without access to a provider kind', () => {
  let client: KubeClient;
  let ns: string;
  let manager: Manager | undefined;
  const roles: Array<{ type: ResourceType; name: string }> = [];

  before(async () => {
    client = await testClient();
    ns = await createNamespace(client, 'machine-forbidden');
    manager = await startManager([ns], await restrictedKubeConfig(client, ns, roles));
  });

  after(async () => {
    await manager?.stop();
    if (client && ns) {
      await releaseMachines(client, ns);
      await deleteNamespace(client, ns);
      for (const r of roles) await client.delete(r.type, undefined, r.name).catch(() => undefined);
    }
  });

  it('InfrastructureForbidden saying how to grant access, and an Event; a ClusterRole for the kind lets it through', async () => {
    await createProvider(client, LOCKED, ns, 'l1', 'm7');
    await client.create(MACHINE, referencing(ns, 'm7', ref(LOCKED, 'l1')));
    const failed = await waitForMachine(
      client,
      ns,
      'm7',
      'InfrastructureForbidden',
      reasonIs('InfrastructureForbidden'),
    );
    assert.equal(failed.status?.phase, 'Failed');
    assert.match(
      condition(failed, 'InfrastructureReady')?.message ?? '',
      new RegExp(`ClusterRole labelled ${AGGREGATE_TO_MANAGER_LABEL.replaceAll('.', '\\.')}: "true"`),
    );
    await waitForEvent(client, ns, 'Machine', 'm7', 'InfrastructureForbidden');

    // What a provider ships (aggregated into the real operator's role; bound directly to this one).
    await grant(client, ns, roles, 'locked', [
      { apiGroups: [GROUP], resources: [LOCKED.plural], verbs: ['get', 'list', 'watch', 'patch', 'delete'] },
    ]);
    await waitForMachine(
      client,
      ns,
      'm7',
      'Provisioning once allowed',
      (m) => m.status?.phase === 'Provisioning',
      90_000,
    );
  });
});

async function startManager(namespaces: string[], kubeConfig: KubeConfig): Promise<Manager> {
  const info = await testCluster();
  const config = parseConfig(
    [
      '--kubeconfig',
      info.kubeconfig,
      '--namespaces',
      namespaces.join(','),
      '--metrics-bind-address',
      '0',
      '--health-probe-bind-address',
      '0',
      '--log-level',
      process.env.TEST_LOG_LEVEL ?? 'error',
    ],
    {},
  );
  if (config === 'help') throw new Error('unexpected help');
  const manager = new Manager(config, kubeConfig, operatorManagerOptions);
  registerMachineController(manager);
  await manager.start();
  return manager;
}

/** Creates a ClusterRole with `rules` and binds it to the test's ServiceAccount in `ns`. */
async function grant(
  client: KubeClient,
  ns: string,
  roles: Array<{ type: ResourceType; name: string }>,
  suffix: string,
  rules: object[],
): Promise<void> {
  const name = `mc-${RUN}-${suffix}`;
  await client.create(CLUSTER_ROLE, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name },
    rules,
  });
  await client.create(CLUSTER_ROLE_BINDING, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [{ kind: 'ServiceAccount', name: SERVICE_ACCOUNT, namespace: ns }],
  });
  roles.push({ type: CLUSTER_ROLE_BINDING, name }, { type: CLUSTER_ROLE, name });
}

const CLUSTER_ROLE = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'ClusterRole',
  plural: 'clusterroles',
  namespaced: false,
};
const CLUSTER_ROLE_BINDING = { ...CLUSTER_ROLE, kind: 'ClusterRoleBinding', plural: 'clusterrolebindings' };
const SERVICE_ACCOUNT = 'machine-operator';

/**
 * A kubeconfig for a ServiceAccount that may do what the Machine controller does with Machines,
 * Events and CRDs, and nothing with the test's LockedMachine kind.
 */
async function restrictedKubeConfig(
  client: KubeClient,
  ns: string,
  roles: Array<{ type: ResourceType; name: string }>,
): Promise<KubeConfig> {
  await client.create(CoreTypes.ServiceAccount, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: SERVICE_ACCOUNT, namespace: ns },
  });
  await grant(client, ns, roles, 'machines', [
    {
      apiGroups: ['infra.basicoperator.dev'],
      resources: ['machines'],
      verbs: ['get', 'list', 'watch', 'patch', 'update'],
    },
    {
      apiGroups: ['infra.basicoperator.dev'],
      resources: ['machines/status'],
      verbs: ['get', 'patch', 'update'],
    },
    { apiGroups: ['infra.basicoperator.dev'], resources: ['machines/finalizers'], verbs: ['update'] },
    {
      apiGroups: ['events.k8s.io'],
      resources: ['events'],
      verbs: ['create', 'patch', 'get', 'list', 'watch'],
    },
    {
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      verbs: ['get', 'list', 'watch'],
    },
  ]);
  const token = await client.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${ns}/serviceaccounts/${SERVICE_ACCOUNT}/token`,
    {
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 3600 },
      },
    },
  );
  const admin = await testKubeConfig();
  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error('the test kubeconfig has no current cluster');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: SERVICE_ACCOUNT, token: token.status.token }],
    contexts: [{ name: 'restricted', cluster: cluster.name, user: SERVICE_ACCOUNT }],
    currentContext: 'restricted',
  });
  return kc;
}
