// The pod fields of an inline Machine (and PodMachine) against the real API server: the schema and
// CEL rules refuse bad input with readable messages, the fields are immutable, and in a namespace
// that enforces Pod Security `restricted` a Machine without security fields runs (its pod restricted
// by default, every field on it), one asking for a privileged container is refused with the API
// server's words and retried with backoff, not in a loop, and Ready follows the pod's readiness.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { V1Pod, V1ServiceAccount } from '@kubernetes/client-node';
import { load } from 'js-yaml';
import { labelNamespace } from '../../../e2e/support/namespace.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  MACHINE,
  type Machine,
  type MachineSpec,
  POD_MACHINE,
  type PodMachine,
} from '../../../src/apis/index.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../../../src/runtime/client/resource.ts';
import {
  condition,
  getPodMachine,
  isRunningAndReady,
  type MachineSuite,
  machine,
  startMachineSuite,
  stopMachineSuite,
  waitForEvent,
  waitForMachine,
} from './helpers.ts';

const RESTRICTED = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/enforce-version': 'latest',
};

/** The rejection of creating `obj`, as status code and message. */
async function rejection(
  client: KubeClient,
  type: ResourceType,
  obj: unknown,
): Promise<{ code: number; message: string }> {
  try {
    await client.create(type, obj as KubeObject);
  } catch (err) {
    if (err instanceof ApiError) return { code: err.statusCode, message: err.message };
    throw err;
  }
  assert.fail(`the API server accepted an invalid ${type.kind}`);
}

/** The pod fields of a database, as a user would write them: every field at least once. */
const DATABASE: Partial<MachineSpec> = {
  env: [
    { name: 'PGDATA', value: '/data/pgdata' },
    { name: 'POSTGRES_PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
    { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
  ],
  envFrom: [{ prefix: 'APP_', configMapRef: { name: 'settings', optional: true } }],
  resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '512Mi' } },
  ports: [{ name: 'pg', containerPort: 5432, protocol: 'TCP' }],
  readinessProbe: { exec: { command: ['pg_isready', '-h', '127.0.0.1'] }, periodSeconds: 5 },
  livenessProbe: { tcpSocket: { port: 'pg' }, initialDelaySeconds: 10, failureThreshold: 6 },
  startupProbe: { exec: { command: ['pg_isready'] }, failureThreshold: 30, periodSeconds: 2 },
  securityContext: { readOnlyRootFilesystem: true },
  podSecurityContext: { runAsUser: 999, runAsGroup: 999, fsGroup: 999 },
  serviceAccountName: 'db',
  automountServiceAccountToken: false,
  nodeSelector: { 'kubernetes.io/os': 'linux' },
  tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' }],
  affinity: {
    nodeAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 10,
          preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] },
        },
      ],
    },
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 50,
          podAffinityTerm: {
            topologyKey: 'kubernetes.io/hostname',
            labelSelector: { matchLabels: { app: 'db' } },
          },
        },
      ],
    },
  },
};

describe('the pod fields of Machine and PodMachine: schema and CEL', () => {
  let suite: MachineSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    suite = await startMachineSuite('machine-podfields-bad', 0);
    ({ client, ns } = suite);
  });
  after(() => stopMachineSuite(suite));

  const withFields = (fields: Record<string, unknown>) => ({
    ...machine('', 'x'),
    spec: { image: 'registry.k8s.io/pause:3.10', ...fields },
  });
  const cases: Array<{ what: string; fields: Record<string, unknown>; expect: RegExp[] }> = [
    {
      what: 'a probe with two handlers',
      fields: { readinessProbe: { exec: { command: ['true'] }, tcpSocket: { port: 80 } } },
      expect: [/spec\.readinessProbe/, /a probe must set exactly one of exec, httpGet, tcpSocket and grpc/],
    },
    {
      what: 'a probe with no handler',
      fields: { startupProbe: { periodSeconds: 5 } },
      expect: [/spec\.startupProbe/, /a probe must set exactly one of exec, httpGet, tcpSocket and grpc/],
    },
    {
      what: 'a liveness probe with successThreshold 2',
      fields: { livenessProbe: { tcpSocket: { port: 80 }, successThreshold: 2 } },
      expect: [/spec\.livenessProbe/, /successThreshold must be 1 for liveness and startup probes/],
    },
    {
      what: 'a probe port out of range',
      fields: { readinessProbe: { httpGet: { port: 70000 } } },
      expect: [/spec\.readinessProbe\.httpGet\.port/],
    },
    {
      what: 'an env var with value and valueFrom',
      fields: {
        env: [{ name: 'A', value: 'x', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }],
      },
      expect: [/spec\.env\[0\]/, /set value or valueFrom, not both/],
    },
    {
      what: 'a valueFrom with two sources',
      fields: {
        env: [
          {
            name: 'A',
            valueFrom: {
              secretKeyRef: { name: 's', key: 'k' },
              configMapKeyRef: { name: 'c', key: 'k' },
            },
          },
        ],
      },
      expect: [/spec\.env\[0\]\.valueFrom/, /valueFrom must set exactly one of secretKeyRef/],
    },
    {
      what: 'an env var without a name, and a secretKeyRef without a key',
      fields: { env: [{ value: 'x' }, { name: 'B', valueFrom: { secretKeyRef: { name: 's' } } }] },
      expect: [
        /spec\.env\[0\]\.name: Required value/,
        /spec\.env\[1\]\.valueFrom\.secretKeyRef\.key: Required value/,
      ],
    },
    {
      what: 'an envFrom with neither source',
      fields: { envFrom: [{ prefix: 'X_' }] },
      expect: [/spec\.envFrom\[0\]/, /exactly one of secretRef and configMapRef/],
    },
    {
      what: 'a resource quantity that is not one',
      fields: { resources: { limits: { memory: 'lots' } } },
      expect: [/spec\.resources\.limits\.memory/],
    },
    {
      what: 'port 0 and an unknown protocol',
      fields: { ports: [{ containerPort: 0 }, { containerPort: 81, protocol: 'HTTP' }] },
      expect: [/spec\.ports\[0\]\.containerPort/, /spec\.ports\[1\]\.protocol: Unsupported value: "HTTP"/],
    },
    {
      what: 'a repeated port name',
      fields: {
        ports: [
          { name: 'web', containerPort: 80 },
          { name: 'web', containerPort: 81 },
        ],
      },
      expect: [/spec\.ports/, /port names must be unique/],
    },
    {
      what: 'an unknown procMount',
      fields: { securityContext: { procMount: 'Sometimes' } },
      expect: [/spec\.securityContext\.procMount: Unsupported value/],
    },
    {
      what: 'user and group ids beyond 2^31-1 (core/v1 refuses such a pod)',
      fields: {
        podSecurityContext: { runAsUser: 2147483648, fsGroup: 2147483648 },
        securityContext: { runAsGroup: 2147483648 },
      },
      expect: [
        /spec\.podSecurityContext\.runAsUser: Invalid value: 2147483648: .*less than or equal to 2147483647/,
        /spec\.podSecurityContext\.fsGroup/,
        /spec\.securityContext\.runAsGroup/,
      ],
    },
    {
      what: 'a Localhost seccomp profile without its file',
      fields: { podSecurityContext: { seccompProfile: { type: 'Localhost' } } },
      expect: [
        /spec\.podSecurityContext\.seccompProfile/,
        /localhostProfile is required with type Localhost/,
      ],
    },
    {
      what: 'a ServiceAccount name that is not a DNS subdomain',
      fields: { serviceAccountName: 'My_Account' },
      expect: [/spec\.serviceAccountName/],
    },
    {
      what: 'a toleration with Exists and a value',
      fields: { tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }] },
      expect: [/spec\.tolerations\[0\]/, /a toleration with operator Exists must not set a value/],
    },
    {
      what: 'a toleration of an unknown effect',
      fields: { tolerations: [{ key: 'k', effect: 'Never' }] },
      expect: [/spec\.tolerations\[0\]\.effect: Unsupported value: "Never"/],
    },
    {
      what: 'a toleration with an empty key and operator Equal',
      fields: { tolerations: [{ operator: 'Equal', value: 'v' }] },
      expect: [/spec\.tolerations\[0\]/, /a toleration with an empty key must use operator Exists/],
    },
    {
      what: 'tolerationSeconds with an effect other than NoExecute',
      fields: {
        tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 30 }],
      },
      expect: [/spec\.tolerations\[0\]/, /tolerationSeconds is allowed only with effect NoExecute/],
    },
    {
      what: 'terminationGracePeriodSeconds on a readiness probe',
      fields: { readinessProbe: { tcpSocket: { port: 5432 }, terminationGracePeriodSeconds: 10 } },
      expect: [/spec\.readinessProbe/, /terminationGracePeriodSeconds is not allowed on a readiness probe/],
    },
    {
      what: 'a node affinity Gt with a value that is not an integer',
      fields: {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['many'] }] }],
            },
          },
        },
      },
      expect: [/values must be non-empty for In and NotIn, a single integer for Gt and Lt/],
    },
    {
      what: 'a pod affinity term without its topologyKey',
      fields: {
        affinity: {
          podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ namespaces: ['a'] }] },
        },
      },
      expect: [/topologyKey: Required value/],
    },
  ];

  for (const c of cases) {
    it(`a Machine with ${c.what} is refused`, async () => {
      const obj = withFields(c.fields);
      obj.metadata = { name: `bad-${cases.indexOf(c)}`, namespace: ns };
      const { code, message } = await rejection(client, MACHINE, obj);
      assert.equal(code, 422, message);
      for (const pattern of c.expect) assert.match(message, pattern);
    });
  }

  it('a PodMachine has the same schema', async () => {
    const { code, message } = await rejection(client, POD_MACHINE, {
      apiVersion: POD_MACHINE.apiVersion,
      kind: POD_MACHINE.kind,
      metadata: { name: 'bad-pm', namespace: ns },
      spec: {
        image: 'registry.k8s.io/pause:3.10',
        readinessProbe: { grpc: { port: 9090 }, httpGet: { port: 80 } },
        env: [{ name: 'A', valueFrom: {} }],
      },
    });
    assert.equal(code, 422, message);
    assert.match(message, /spec\.readinessProbe/);
    assert.match(message, /a probe must set exactly one of exec, httpGet, tcpSocket and grpc/);
    assert.match(message, /valueFrom must set exactly one of/);
  });

  it('pod fields belong to an inline Machine: refused beside infrastructureRef', async () => {
    const { code, message } = await rejection(client, MACHINE, {
      ...machine(ns, 'bad-ref'),
      spec: {
        infrastructureRef: { apiVersion: POD_MACHINE.apiVersion, kind: POD_MACHINE.kind, name: 'pm' },
        resources: { requests: { cpu: '1' } },
      },
    });
    assert.equal(code, 422, message);
    assert.match(
      message,
      /command, args, volumes and the pod fields \(env, resources, probes, securityContext, \.\.\.\) describe an inline Machine; with infrastructureRef they belong in the provider object/,
    );
  });

  it('every field of a database is accepted, and then immutable: the PodMachine is never rewritten', async () => {
    await client.create(
      MACHINE,
      machine(ns, 'fixed', { volumes: [], backup: { policy: 'None' }, ...structuredClone(DATABASE) }),
    );
    const edit = async (spec: Record<string, unknown>): Promise<string> => {
      try {
        await client.patch(MACHINE, { namespace: ns, name: 'fixed', patchType: 'merge', body: { spec } });
      } catch (err) {
        assert.ok(err instanceof ApiError);
        assert.equal(err.statusCode, 422, err.message);
        return err.message;
      }
      assert.fail(`the API server accepted the edit ${JSON.stringify(spec)}`);
    };
    const immutable =
      /the pod fields \(env, envFrom, resources, ports, readinessProbe, livenessProbe, startupProbe, securityContext, podSecurityContext, serviceAccountName, automountServiceAccountToken, nodeSelector, tolerations, affinity\) are immutable after creation: the PodMachine made from them is never rewritten/;
    assert.match(await edit({ resources: { requests: { cpu: '2' } } }), immutable);
    assert.match(await edit({ readinessProbe: null }), immutable, 'removing one is a change too');
    assert.match(await edit({ automountServiceAccountToken: true }), immutable);
    assert.match(
      await edit({ affinity: { nodeAffinity: null, podAntiAffinity: DATABASE.affinity?.podAntiAffinity } }),
      immutable,
      'affinity is compared in full',
    );
  });

  it('a PodMachine with pod fields is immutable as a whole', async () => {
    await client.create<PodMachine>(POD_MACHINE, {
      apiVersion: POD_MACHINE.apiVersion,
      kind: POD_MACHINE.kind,
      metadata: { name: 'standalone', namespace: ns },
      spec: { image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m' } } },
    });
    await assert.rejects(
      client.patch(POD_MACHINE, {
        namespace: ns,
        name: 'standalone',
        patchType: 'merge',
        body: { spec: { resources: { requests: { cpu: '200m' } } } },
      }),
      (err: unknown) =>
        err instanceof ApiError && err.statusCode === 422 && /spec is immutable/.test(err.message),
    );
  });
});

describe('a Machine under Pod Security restricted: its pod fields, its defaults, its readiness', () => {
  let suite: MachineSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    suite = await startMachineSuite('machine-podfields', 2);
    ({ client, ns } = suite);
    await labelNamespace(client, ns, RESTRICTED);
  });
  after(() => stopMachineSuite(suite));

  const pod = (name: string) => client.get<V1Pod>(CoreTypes.Pod, ns, name);
  const noBackup = { volumes: [], backup: { policy: 'None' as const } };

  it('without security fields: the pod is admitted, restricted by default, with no API token, and the Machine Ready', async () => {
    await client.create(MACHINE, machine(ns, 'plain', noBackup));
    const m = await waitForMachine(client, ns, 'plain', 'Running and Ready', isRunningAndReady);
    assert.equal(condition(m, 'Ready')?.status, 'True');
    const spec = (await pod('plain')).spec;
    assert.deepEqual(spec?.securityContext, {
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      fsGroup: 65532,
      fsGroupChangePolicy: 'OnRootMismatch',
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(spec?.containers[0]?.securityContext, {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    assert.equal(spec?.automountServiceAccountToken, false);
    assert.ok(!spec?.volumes?.some((v) => v.projected), 'no service account token volume is mounted');
  });

  it('the samples run there unchanged: Machine and PodMachine Ready', async () => {
    const sample = (file: string) => {
      const obj = load(
        readFileSync(new URL(`../../../config/samples/${file}`, import.meta.url), 'utf8'),
      ) as KubeObject;
      return { ...obj, metadata: { ...obj.metadata, namespace: ns } };
    };
    await client.create(MACHINE, sample('infra_v1alpha1_machine.yaml') as Machine);
    await client.create(POD_MACHINE, sample('infra_v1alpha1_podmachine.yaml') as PodMachine);
    const m = await waitForMachine(
      client,
      ns,
      'machine-sample',
      'Running and Ready',
      isRunningAndReady,
      90_000,
    );
    assert.equal(condition(m, 'Ready')?.status, 'True');
    await waitFor(
      'PodMachine podmachine-sample to be Ready',
      async () => (await getPodMachine(client, ns, 'podmachine-sample'))?.status?.ready === true,
      { timeoutMs: 90_000 },
    );
    assert.ok((await pod('machine-sample')).spec?.containers[0]?.readinessProbe?.exec);
  });

  it('with every pod field of a database: each reaches the pod, still restricted', async () => {
    await client.create<V1ServiceAccount>(CoreTypes.ServiceAccount, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'db', namespace: ns },
    });
    await client.create(MACHINE, machine(ns, 'db', { ...noBackup, ...structuredClone(DATABASE) }));
    await waitForMachine(client, ns, 'db', 'its PodMachine Ready', isRunningAndReady);
    const pm = await getPodMachine(client, ns, 'db');
    for (const field of Object.keys(DATABASE) as (keyof MachineSpec)[]) {
      assert.deepEqual(
        pm?.spec[field as keyof PodMachine['spec']],
        DATABASE[field],
        `PodMachine spec.${field}`,
      );
    }
    const spec = (await pod('db')).spec;
    const container = spec?.containers[0];
    assert.deepEqual(container?.env, DATABASE.env);
    assert.deepEqual(container?.envFrom, DATABASE.envFrom);
    assert.deepEqual(container?.resources, DATABASE.resources);
    assert.deepEqual(container?.ports, DATABASE.ports);
    assert.equal(container?.readinessProbe?.exec?.command?.[0], 'pg_isready');
    assert.equal(container?.livenessProbe?.tcpSocket?.port, 'pg');
    assert.equal(container?.startupProbe?.failureThreshold, 30);
    assert.equal(container?.securityContext?.readOnlyRootFilesystem, true);
    assert.equal(container?.securityContext?.allowPrivilegeEscalation, false);
    assert.equal(spec?.securityContext?.runAsUser, 999, "the user's uid wins");
    assert.equal(spec?.securityContext?.runAsNonRoot, true, 'the rest of the defaults stay');
    assert.equal(spec?.serviceAccountName, 'db');
    assert.deepEqual(spec?.nodeSelector, DATABASE.nodeSelector);
    assert.ok(spec?.tolerations?.some((t) => t.key === 'dedicated'));
    assert.deepEqual(spec?.affinity, DATABASE.affinity);
  });

  it("Ready follows the pod's readiness: false when it goes unready, naming the probe, and true again", async () => {
    await client.create(
      MACHINE,
      machine(ns, 'probed', { ...noBackup, readinessProbe: { httpGet: { path: '/healthz', port: 8080 } } }),
    );
    await waitForMachine(client, ns, 'probed', 'Running and Ready', isRunningAndReady);
    const setReady = async (ready: boolean) => {
      const current = await pod('probed');
      const status = ready ? 'True' : 'False';
      const conditions = (current.status?.conditions ?? []).map((c) =>
        c.type === 'Ready' || c.type === 'ContainersReady'
          ? {
              ...c,
              status,
              ...(ready
                ? { reason: undefined, message: undefined }
                : { reason: 'ContainersNotReady', message: 'containers with unready status: [machine]' }),
            }
          : c,
      );
      const containerStatuses = (current.status?.containerStatuses ?? []).map((c) => ({
        ...c,
        ready,
        started: true,
      }));
      await client.patch<V1Pod>(CoreTypes.Pod, {
        namespace: ns,
        name: 'probed',
        patchType: 'merge',
        body: { status: { conditions, containerStatuses } },
        subresource: 'status',
      });
    };
    await setReady(false);
    const unready = await waitForMachine(client, ns, 'probed', 'not Ready', (m) => m.status?.ready === false);
    assert.equal(unready.status?.phase, 'Provisioning', 'its provider is not ready');
    const ready = condition(unready, 'Ready');
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.reason, 'PodNotReady');
    assert.match(
      ready?.message ?? '',
      /PodMachine probed: pod probed is running but not ready: container machine is not passing its readinessProbe \(httpGet http port 8080\/healthz\)/,
    );
    await setReady(true);
    await waitForMachine(client, ns, 'probed', 'Ready again', isRunningAndReady);
  });

  it('asking for a privileged container: PodRefused quoting the API server, a Warning, retried with backoff, not in a loop', async (t) => {
    await client.create(
      MACHINE,
      machine(ns, 'privileged', { ...noBackup, securityContext: { privileged: true } }),
    );
    const m = await waitForMachine(
      client,
      ns,
      'privileged',
      'InfrastructureReady=False with reason PodRefused',
      (x) => condition(x, 'InfrastructureReady')?.reason === 'PodRefused',
    );
    assert.equal(m.status?.phase, 'Provisioning', 'transient: not Failed');
    assert.match(
      condition(m, 'Ready')?.message ?? '',
      /refused pod privileged: .*pods "privileged" is forbidden: violates PodSecurity "restricted:latest": privileged \(container "machine" must not set securityContext\.privileged=true\).*retrying with backoff/,
    );
    const event = await waitForEvent(client, ns, 'PodMachine', 'privileged', 'PodRefused');
    assert.equal(event.type, 'Warning');
    assert.match(event.note ?? '', /violates PodSecurity "restricted:latest"/);

    const reconciles = async () => {
      const metric = await suite!.manager.registry
        .getSingleMetric('controller_runtime_reconcile_total')
        ?.get();
      return (metric?.values ?? [])
        .filter((v) => v.labels.controller === 'podmachine')
        .reduce((n, v) => n + v.value, 0);
    };
    const before = await reconciles();
    await new Promise((r) => setTimeout(r, 10_000));
    const spent = (await reconciles()) - before;
    t.diagnostic(`PodMachine reconciles in 10 s while its pod is refused: ${spent}`);
    assert.ok(spent < 30, `the queue's backoff spaces the retries out; saw ${spent} reconciles in 10 s`);
    const still = await getPodMachine(client, ns, 'privileged');
    assert.equal(condition(still, 'Ready')?.reason, 'PodRefused', 'still refused, still saying so');
  });
});
