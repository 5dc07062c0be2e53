// The StatefulSetMachine provider in a namespace that enforces Pod Security `restricted`: a machine
// with no security fields runs unchanged (its pod template is restricted by default, with no API
// token), and one asking for a privileged container says why kube-controller-manager makes no pod
// (PodRefused, quoting the API server's answer to a dry run of the template's pod).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { testClient } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace, labelNamespace } from '../../../e2e/support/namespace.ts';
import type { OperatorProcess } from '../../../e2e/support/operator-process.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import { STATEFULSET_MACHINE } from '../../../examples/statefulset-provider/src/api.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import {
  getLive,
  installProvider,
  readyReason,
  startProvider,
  statefulSetMachine,
  waitForMachine,
} from './provider.ts';

interface EventLike {
  metadata?: object;
  reason?: string;
  note?: string;
  type?: string;
  regarding?: { kind?: string; name?: string };
}

describe('StatefulSetMachine provider: Pod Security restricted', () => {
  let client: KubeClient;
  let ns = '';
  let provider: OperatorProcess | undefined;

  before(async () => {
    await installProvider(2);
    client = await testClient();
    ns = await createNamespace(client, 'stsm-psa');
    await labelNamespace(client, ns, {
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/enforce-version': 'latest',
    });
    provider = await startProvider(ns);
  });
  after(async () => {
    await provider?.stop();
    if (ns) await deleteNamespace(client, ns);
  });

  it('runs a machine with no security fields: its pod passes restricted, as 65532, with no API token, carrying the pod fields', async () => {
    await client.create(
      STATEFULSET_MACHINE,
      statefulSetMachine(ns, 'plain', {
        volumes: [{ name: 'data', size: '1Gi', mountPath: '/data' }],
        env: [{ name: 'PGDATA', value: '/data/pg' }],
        resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } },
        ports: [{ name: 'pg', containerPort: 5432 }],
        readinessProbe: { tcpSocket: { port: 'pg' }, periodSeconds: 5 },
      }),
    );
    const m = await waitForMachine(client, ns, 'plain', 'ready', (x) => x.status?.ready === true);
    assert.equal(readyReason(m), 'Running');
    const pod = await client.get<V1Pod>(CoreTypes.Pod, ns, 'plain-0');
    assert.equal(pod.spec?.securityContext?.runAsNonRoot, true);
    assert.equal(pod.spec?.securityContext?.runAsUser, 65532);
    assert.equal(pod.spec?.securityContext?.seccompProfile?.type, 'RuntimeDefault');
    assert.equal(pod.spec?.automountServiceAccountToken, false);
    assert.deepEqual(
      pod.spec?.volumes?.map((v) => v.name),
      ['data'],
      'no projected ServiceAccount token volume',
    );
    const container = pod.spec?.containers[0];
    assert.deepEqual(container?.env, [{ name: 'PGDATA', value: '/data/pg' }]);
    assert.equal(container?.resources?.limits?.memory, '128Mi');
    assert.equal(container?.readinessProbe?.tcpSocket?.port, 'pg');
    assert.deepEqual(container?.securityContext?.capabilities?.drop, ['ALL']);
  });

  it('a privileged machine: PodRefused quoting the API server, a Warning Event, no failure', async () => {
    await client.create(
      STATEFULSET_MACHINE,
      statefulSetMachine(ns, 'priv', { volumes: [], securityContext: { privileged: true } }),
    );
    const m = await waitForMachine(client, ns, 'priv', 'PodRefused', (x) => readyReason(x) === 'PodRefused');
    const ready = m.status?.conditions?.find((c) => c.type === 'Ready');
    assert.match(
      ready?.message ?? '',
      /^the API server refuses pod priv-0 of StatefulSet priv: .*violates PodSecurity "restricted:latest": privileged/,
    );
    assert.equal(m.status?.phase, 'Provisioning');
    assert.equal(m.status?.ready, false);
    assert.equal(m.status?.failureReason, undefined, 'not terminal: the namespace may change');
    assert.equal(await getLive(() => client.get<V1Pod>(CoreTypes.Pod, ns, 'priv-0')), undefined);
    await waitFor('the Warning PodRefused Event about priv', async () => {
      const list = await client.list<EventLike>(CoreTypes.Event, { namespace: ns });
      return list.items.some(
        (e) =>
          e.regarding?.kind === 'StatefulSetMachine' &&
          e.regarding.name === 'priv' &&
          e.type === 'Warning' &&
          e.reason === 'PodRefused' &&
          /violates PodSecurity/.test(e.note ?? ''),
      );
    });
  });
});
