// A PodMachine in a namespace that enforces the Pod Security `restricted` profile: without security
// fields its pod passes (the defaults are restricted); one that asks for a privileged container is
// refused by kube-apiserver's PodSecurity admission. That is a transient failure (Ready=False
// PodRefused, no failureReason), retried with the work queue's bounded backoff, so the PodMachine
// recovers once the namespace allows the pod. A restore there copies as non-root: admission, asked
// with a dry run, refuses a root copy pod.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { labelNamespace } from '../../../e2e/support/namespace.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  isViolation,
  POD_MACHINE,
  readInfrastructure,
  VOLUME_BACKUP,
  type VolumeBackup,
} from '../../../src/apis/index.ts';
import { RESTORED_FROM_ANNOTATION } from '../../../src/controllers/podmachine/names.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { type OperatorSuite, stopOperatorSuite } from '../../support/suite.ts';
import {
  condition,
  isReady,
  podMachine,
  pods,
  startPodMachineSuite,
  waitForEvent,
  waitForPodMachine,
} from './helpers.ts';

describe('PodMachine under Pod Security restricted', () => {
  let suite: OperatorSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    suite = await startPodMachineSuite('podmachine-psa', 5, { withBackups: true });
    ({ client, ns } = suite);
    await labelNamespace(client, ns, {
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/enforce-version': 'latest',
    });
  });
  after(() => stopOperatorSuite(suite));

  it('without security fields: the pod is admitted, restricted by default, and Ready', async () => {
    await client.create(
      POD_MACHINE,
      podMachine(ns, 'plain', { volumes: [{ name: 'data', size: '1Gi', mountPath: '/data' }] }),
    );
    const pm = await waitForPodMachine(client, ns, 'plain', 'Ready', isReady, 60_000);
    assert.equal(pm.status?.phase, 'Running');
    const [pod] = (await pods(client, ns)).filter((p) => p.metadata?.name === 'plain');
    assert.equal(pod?.spec?.securityContext?.runAsNonRoot, true);
    assert.equal(pod?.spec?.securityContext?.runAsUser, 65532);
    assert.equal(pod?.spec?.automountServiceAccountToken, false);
    assert.deepEqual(pod?.spec?.containers[0]?.securityContext?.capabilities?.drop, ['ALL']);
  });

  it('a refused pod is transient: PodRefused with the admission message, no failureReason, a Warning', async () => {
    await client.create(
      POD_MACHINE,
      podMachine(ns, 'locked', {
        volumes: [{ name: 'data', size: '1Gi', mountPath: '/data' }],
        securityContext: { privileged: true },
      }),
    );
    const pm = await waitForPodMachine(
      client,
      ns,
      'locked',
      'PodRefused, its claim Bound',
      (p) => condition(p, 'Ready')?.reason === 'PodRefused' && p.status?.volumes?.[0]?.phase === 'Bound',
    );
    assert.match(
      condition(pm, 'Ready')?.message ?? '',
      /refused pod locked: .*violates PodSecurity "restricted:latest": privileged \(container "machine" must not set securityContext.privileged=true\).*retrying with backoff/,
    );
    assert.equal(pm.status?.ready, false);
    assert.notEqual(pm.status?.phase, 'Failed');
    assert.equal(pm.status?.failureReason, undefined);
    assert.equal(pm.status?.failureMessage, undefined);
    const view = readInfrastructure({ metadata: pm.metadata, status: pm.status });
    assert.ok(!isViolation(view));
    assert.equal(view.failure, undefined, 'the Machine waits: not terminal');
    assert.deepEqual(pm.status?.volumes, [{ name: 'data', claimName: 'locked-data', phase: 'Bound' }]);
    assert.deepEqual(
      (await pods(client, ns)).filter((p) => p.metadata?.name === 'locked'),
      [],
    );
    const event = await waitForEvent(client, ns, 'locked', 'PodRefused');
    assert.equal(event.type, 'Warning');
  });

  it('a restore copies as non-root (admission refuses a root copy pod, asked with a dry run), is verified, and only then is the pod tried', async () => {
    // A standalone backup of the refused PodMachine's claim (nothing writes to it: no pod runs).
    await client.create<VolumeBackup>(VOLUME_BACKUP, {
      apiVersion: VOLUME_BACKUP.apiVersion,
      kind: VOLUME_BACKUP.kind,
      metadata: { name: 'locked-backup', namespace: ns },
      spec: { volumes: [{ name: 'data', claimName: 'locked-data' }] },
    });
    await waitFor(
      'VolumeBackup locked-backup to complete',
      async () =>
        (await client.get<VolumeBackup>(VOLUME_BACKUP, ns, 'locked-backup')).status?.phase === 'Completed',
      { timeoutMs: 90_000 },
    );
    await client.create(
      POD_MACHINE,
      podMachine(ns, 'restored', {
        securityContext: { privileged: true },
        volumes: [
          {
            name: 'data',
            size: '1Gi',
            mountPath: '/data',
            restoreFrom: { volumeBackup: 'locked-backup', volume: 'data' },
          },
        ],
      }),
    );
    const pm = await waitForPodMachine(
      client,
      ns,
      'restored',
      'restored, then its pod refused',
      (p) =>
        condition(p, 'VolumesReady')?.status === 'True' && condition(p, 'Ready')?.reason === 'PodRefused',
      90_000,
    );
    assert.equal(pm.status?.failureReason, undefined);
    const job = await client.get<V1Job>(CoreTypes.Job, ns, 'restored-data-restore');
    const spec = job.spec?.template.spec;
    assert.equal(spec?.securityContext?.runAsUser, 65532);
    assert.equal(spec?.securityContext?.runAsNonRoot, true);
    assert.deepEqual(spec?.containers[0]?.args?.slice(-2), ['--pod-security-level', 'restricted']);
    const claim = await client.get<V1PersistentVolumeClaim>(
      CoreTypes.PersistentVolumeClaim,
      ns,
      'restored-data',
    );
    assert.equal(claim.metadata?.annotations?.[RESTORED_FROM_ANNOTATION], 'locked-backup/data');
    const started = await waitForEvent(client, ns, 'restored', 'RestoreStarted');
    assert.match(
      started.note ?? '',
      /as uid 65532, gid 65532, fsGroup 65532 \(Pod Security "restricted" refuses a root copy here/,
    );
  });

  it('gets Ready by itself once the namespace allows the pod (the retry with backoff)', async () => {
    const started = Date.now();
    await labelNamespace(client, ns, { 'pod-security.kubernetes.io/enforce': 'privileged' });
    const pm = await waitForPodMachine(client, ns, 'locked', 'Ready', isReady, 60_000);
    assert.equal(pm.status?.phase, 'Running');
    console.log(`  Ready ${Date.now() - started} ms after the namespace allowed the pod`);
  });
});
