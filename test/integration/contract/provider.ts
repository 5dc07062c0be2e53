// Small providers of the Machine infrastructure contract v1 for the conformance kit's own tests: one
// that follows the contract, and some that break one rule each. Each is a kind of its own in a test
// group, served by a controller on src/runtime in the test process: one claim plus one pod mounting
// it, readiness from the pod, and (unless broken) the deletion handshake.
import type { V1CustomResourceDefinition, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { LocalProvider } from '../../../e2e/providers/local/index.ts';
import { testCluster, testKubeConfig } from '../../../e2e/support/cluster.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  CONTRACT_LABEL,
  type InfrastructureVolume,
  stopRequested,
} from '../../../src/apis/infra/contract/index.ts';
import type { Informer } from '../../../src/runtime/cache/informer.ts';
import { isAlreadyExists, isNotFound } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType, resourceOf } from '../../../src/runtime/client/resource.ts';
import type {
  ReconcileContext,
  Reconciler,
  Request,
  Result,
} from '../../../src/runtime/controller/reconciler.ts';
import { parseConfig } from '../../../src/runtime/manager/config.ts';
import { Manager } from '../../../src/runtime/manager/manager.ts';
import { type Condition, setCondition } from '../../../src/runtime/write/conditions.ts';
import { controllerReference } from '../../../src/runtime/write/owner-refs.ts';
import { testLogger } from '../../support/log.ts';
import { TEST_CONTROLLERS_USER_AGENT } from '../../support/manager.ts';

export const TEST_GROUP = 'contract-kit.test.basicoperator.dev';
const TEST_VERSION = 'v1alpha1';

/** The one rule a test provider breaks, or none. */
export type Flaw =
  | 'none'
  /** Ignores the stop request: the pod keeps running, stopped is never reported. */
  | 'never-stops'
  /** Stops the pod, then deletes the claim too, and reports stopped. */
  | 'deletes-claims'
  /** Reports stopped at once and leaves the pod running. */
  | 'stops-nothing'
  /** Its CRD has no contract label. */
  | 'undeclared'
  /** Reports `status.ready` as a string. */
  | 'mistyped';

export interface TestKind {
  kind: string;
  plural: string;
  flaw: Flaw;
}

export const TEST_KINDS = {
  conforming: { kind: 'ConformingMachine', plural: 'conformingmachines', flaw: 'none' },
  neverStops: { kind: 'NeverStoppingMachine', plural: 'neverstoppingmachines', flaw: 'never-stops' },
  deletesClaims: { kind: 'ClaimDeletingMachine', plural: 'claimdeletingmachines', flaw: 'deletes-claims' },
  stopsNothing: { kind: 'FalselyStoppedMachine', plural: 'falselystoppedmachines', flaw: 'stops-nothing' },
  undeclared: { kind: 'UndeclaredMachine', plural: 'undeclaredmachines', flaw: 'undeclared' },
  mistyped: { kind: 'MistypedMachine', plural: 'mistypedmachines', flaw: 'mistyped' },
} as const satisfies Record<string, TestKind>;

/** What the kit's `--kind` takes for this kind. */
export const kindArgument = (kind: TestKind) => `${kind.kind}.${TEST_GROUP}`;

interface TestMachineStatus {
  ready?: boolean | string;
  stopped?: boolean;
  providerID?: string;
  addresses?: { type: string; address: string }[];
  volumes?: InfrastructureVolume[];
  conditions?: Condition[];
}

interface TestMachine extends KubeObject {
  spec?: Record<string, unknown>;
  status?: TestMachineStatus;
}

export const testResource = (kind: TestKind) =>
  resourceOf<TestMachine>()({
    group: TEST_GROUP,
    version: TEST_VERSION,
    kind: kind.kind,
    plural: kind.plural,
    namespaced: true,
  });

const CRD = resourceOf<V1CustomResourceDefinition>()({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
});

/** Any spec and status: a loose schema lets the mistyped provider write what a strict one would refuse. */
export function testCrd(kind: TestKind): V1CustomResourceDefinition {
  const loose = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${kind.plural}.${TEST_GROUP}`,
      labels: kind.flaw === 'undeclared' ? {} : { [CONTRACT_LABEL]: TEST_VERSION },
    },
    spec: {
      group: TEST_GROUP,
      names: {
        kind: kind.kind,
        listKind: `${kind.kind}List`,
        plural: kind.plural,
        singular: kind.kind.toLowerCase(),
      },
      scope: 'Namespaced',
      versions: [
        {
          name: TEST_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: loose, status: loose } } },
        },
      ],
    },
  };
}

/** Applies the kinds' CRDs (server-side, idempotent) and waits until each is established. */
export async function installTestCrds(client: KubeClient, kinds: readonly TestKind[]): Promise<void> {
  for (const kind of kinds) {
    const crd = testCrd(kind);
    const name = crd.metadata?.name ?? '';
    await client.patch(CRD, {
      namespace: undefined,
      name,
      patchType: 'apply',
      body: crd,
      fieldManager: 'contract-kit-tests',
      force: true,
    });
    await waitFor(`CRD ${name} to be established`, async () => {
      const current = await client.get(CRD, undefined, name);
      return current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    });
  }
}

export async function deleteTestCrds(client: KubeClient, kinds: readonly TestKind[]): Promise<void> {
  for (const kind of kinds) {
    await client.delete(CRD, undefined, testCrd(kind).metadata?.name ?? '').catch(() => undefined);
  }
}

/** The local cluster binds claims to pre-provisioned volumes: makes sure `count` are free. */
export async function ensureFreeVolumes(count: number): Promise<void> {
  const info = await testCluster();
  if (info.provider === 'local') await new LocalProvider(info.name).ensureVolumes(count);
}

/**
 * A manager in this process that watches `namespace` and runs one test provider per kind. Its
 * cache holds every pod and claim of the namespace (not only the operator's, as the operator's
 * manager options would select).
 */
export async function startTestProviders(namespace: string, kinds: readonly TestKind[]): Promise<Manager> {
  testLogger();
  const info = await testCluster();
  const config = parseConfig(
    [
      '--kubeconfig',
      info.kubeconfig,
      '--namespaces',
      namespace,
      '--metrics-secure=false',
      '--metrics-bind-address',
      '127.0.0.1:0',
      '--health-probe-bind-address',
      '127.0.0.1:0',
      '--log-level',
      process.env.TEST_LOG_LEVEL ?? 'error',
    ],
    {},
  );
  if (config === 'help') throw new Error('unexpected help');
  const manager = new Manager(config, await testKubeConfig(), { userAgent: TEST_CONTROLLERS_USER_AGENT });
  for (const kind of kinds) {
    const type = testResource(kind);
    manager
      .controller(`test-provider-${kind.plural}`)
      .for(type)
      .status()
      .owns(CoreTypes.Pod)
      .owns(CoreTypes.PersistentVolumeClaim)
      .complete(
        new TestProvider(
          manager.client,
          kind.flaw,
          type,
          manager.cache.informerFor(type),
          manager.cache.informerFor(CoreTypes.Pod),
        ),
      );
  }
  await manager.start();
  return manager;
}

const CLAIM_VOLUME = 'data';
/** How soon to look again while a stopped pod is still going away. */
const STOP_RECHECK_MS = 500;

class TestProvider implements Reconciler<TestMachine> {
  private readonly client: KubeClient;
  private readonly flaw: Flaw;
  private readonly type: ResourceType<TestMachine>;
  private readonly machines: Informer<TestMachine>;
  private readonly pods: Informer<V1Pod>;

  constructor(
    client: KubeClient,
    flaw: Flaw,
    type: ResourceType<TestMachine>,
    machines: Informer<TestMachine>,
    pods: Informer<V1Pod>,
  ) {
    this.client = client;
    this.flaw = flaw;
    this.type = type;
    this.machines = machines;
    this.pods = pods;
  }

  async reconcile(request: Request, ctx: ReconcileContext<TestMachine>): Promise<Result | undefined> {
    const machine = this.machines.get(request.namespace, request.name);
    if (!machine || machine.metadata?.deletionTimestamp) return undefined;
    const volumes = [{ name: CLAIM_VOLUME, claimName: `${request.name}-${CLAIM_VOLUME}` }];
    if (stopRequested(machine) && this.flaw !== 'never-stops') return this.stop(machine, volumes, ctx);
    await this.createUnlessExists(
      CoreTypes.PersistentVolumeClaim,
      this.claim(machine, volumes[0]!.claimName),
    );
    if (!this.pods.get(request.namespace, request.name)) {
      await this.createUnlessExists(CoreTypes.Pod, this.pod(machine, volumes[0]!.claimName));
    }
    const pod = this.pods.get(request.namespace, request.name);
    const running =
      pod?.status?.phase === 'Running' &&
      (pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false);
    ctx.status.write(machine, this.status(machine, ctx, running, pod, volumes));
    return undefined;
  }

  /** The handshake: the pod goes, and once a live read shows it gone, stopped is reported. */
  private async stop(
    machine: TestMachine,
    volumes: InfrastructureVolume[],
    ctx: ReconcileContext<TestMachine>,
  ): Promise<Result | undefined> {
    const { namespace = '', name = '' } = machine.metadata ?? {};
    if (this.flaw === 'stops-nothing') {
      const pod = this.pods.get(namespace, name);
      ctx.status.write(machine, {
        ...this.status(machine, ctx, false, pod, volumes, 'Stopped'),
        stopped: true,
      });
      return undefined;
    }
    await this.client.delete(CoreTypes.Pod, namespace, name).catch(ignoreNotFound);
    const live = await this.client.get(CoreTypes.Pod, namespace, name).catch(ignoreNotFound);
    if (live) return { requeueAfterMs: STOP_RECHECK_MS };
    if (this.flaw === 'deletes-claims') {
      for (const v of volumes) {
        await this.client
          .delete(CoreTypes.PersistentVolumeClaim, namespace, v.claimName)
          .catch(ignoreNotFound);
      }
    }
    ctx.status.write(machine, {
      ...this.status(machine, ctx, false, undefined, volumes, 'Stopped'),
      stopped: true,
    });
    return undefined;
  }

  private status(
    machine: TestMachine,
    ctx: ReconcileContext<TestMachine>,
    running: boolean,
    pod: V1Pod | undefined,
    volumes: InfrastructureVolume[],
    reason = running ? 'PodReady' : 'PodNotReady',
  ): TestMachineStatus {
    const { namespace = '', name = '' } = machine.metadata ?? {};
    const status: TestMachineStatus = { providerID: `pod://${namespace}/${name}`, volumes };
    if (pod?.status?.podIP) status.addresses = [{ type: 'InternalIP', address: pod.status.podIP }];
    if (this.flaw === 'mistyped') {
      status.ready = running ? 'yes' : 'no';
      return status;
    }
    status.ready = running;
    status.conditions = setCondition(
      ctx.status.latest(machine)?.conditions,
      {
        type: 'Ready',
        status: running ? 'True' : 'False',
        reason,
        message: running ? 'the pod runs' : `pod ${name} is not running and ready`,
        observedGeneration: machine.metadata?.generation,
      },
      new Date(),
    );
    return status;
  }

  private async createUnlessExists<T extends KubeObject>(type: ResourceType<T>, obj: T): Promise<void> {
    await this.client.create(type, obj).catch((err: unknown) => {
      if (!isAlreadyExists(err)) throw err;
    });
  }

  private claim(machine: TestMachine, claimName: string): V1PersistentVolumeClaim {
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: claimName,
        namespace: machine.metadata?.namespace,
        ownerReferences: [controllerReference(machine, this.type)],
      },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    };
  }

  private pod(machine: TestMachine, claimName: string): V1Pod {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: machine.metadata?.name,
        namespace: machine.metadata?.namespace,
        ownerReferences: [controllerReference(machine, this.type)],
      },
      spec: {
        containers: [
          {
            name: 'machine',
            image: 'registry.k8s.io/pause:3.10',
            volumeMounts: [{ name: CLAIM_VOLUME, mountPath: '/data' }],
          },
        ],
        volumes: [{ name: CLAIM_VOLUME, persistentVolumeClaim: { claimName } }],
      },
    };
  }
}

function ignoreNotFound(err: unknown): undefined {
  if (isNotFound(err)) return undefined;
  throw err;
}
