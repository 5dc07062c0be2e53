// What kstatus (kubectl wait, Helm --wait, Flux) and Argo CD (our health.lua scripts, run with
// gopher-lua) say about live objects of every kind, made to be in each state on purpose: rolling out,
// ready, failed for good, paused or stopped. The controllers run in-process.
//
// RECORD_HEALTH_FIXTURES=1 also writes each object as seen into test/fixtures/health/, the recorded
// objects the Argo CD script unit test runs against.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { NEVER_READY_ANNOTATION } from '../../../e2e/providers/local/kwok-stages.ts';
import { testCluster } from '../../../e2e/support/cluster.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  BASIC_DEPLOYMENT,
  BASIC_REPLICA_SET,
  type BasicDeployment,
  type BasicReplicaSet,
  MACHINE,
  POD_MACHINE,
  VOLUME_BACKUP,
  type VolumeBackup,
} from '../../../src/apis/index.ts';
import { registerControllers } from '../../../src/controllers/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../../../src/runtime/client/resource.ts';
import {
  type ArgoHealth,
  argoHealth,
  type HealthObject,
  type KstatusStatus,
  kstatus,
  recordFixture,
} from '../../support/health.ts';
import { OPERATOR_DEFAULTS } from '../../support/operator-options.ts';
import { type OperatorSuite, startOperatorSuite, stopOperatorSuite } from '../../support/suite.ts';
import { createQuota, machine, prepareCluster, releaseMachines } from '../machine/helpers.ts';

const RECORD = process.env.RECORD_HEALTH_FIXTURES === '1';
const NOWHERE = 'no-such-class';

function deployment(
  ns: string,
  name: string,
  spec: Partial<BasicDeployment['spec']> = {},
  annotations?: Record<string, string>,
): BasicDeployment {
  return {
    apiVersion: BASIC_DEPLOYMENT.apiVersion,
    kind: BASIC_DEPLOYMENT.kind,
    metadata: { name, namespace: ns },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, ...(annotations ? { annotations } : {}) },
        spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      },
      ...spec,
    },
  };
}

describe('health of live objects: kstatus and Argo CD', () => {
  let suite: OperatorSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    await prepareCluster(8);
    suite = await startOperatorSuite('health', (m) =>
      registerControllers(m, { ...OPERATOR_DEFAULTS, volumeCopyDeadlineMs: 15_000 }),
    );
    ({ client, ns } = suite);
  });
  after(async () => {
    if (!suite) return;
    await suite.manager.stop();
    await releaseMachines(suite.client, suite.ns);
    await stopOperatorSuite(suite);
  });

  /**
   * Waits until the object `find` returns is, for kstatus, `wanted` and, for Argo CD, `argo` (on one
   * read of it); records it as fixture `name`. Returns the object.
   */
  async function expectHealth<T extends HealthObject>(
    name: string,
    state: string,
    find: () => Promise<T | undefined>,
    wanted: KstatusStatus,
    argo: ArgoHealth | undefined,
    timeoutMs = 60_000,
  ): Promise<T> {
    let last = 'not found';
    const object = await waitFor(
      `${name} (${state}) to be kstatus ${wanted}${argo ? ` and Argo CD ${argo}` : ''}`,
      async () => {
        const o = await find();
        if (!o) return undefined;
        const [k] = await kstatus([o]);
        const [a] = argo ? await argoHealth([o]) : [undefined];
        last = `kstatus ${k?.status} (${k?.message}), Argo CD ${a?.status} (${a?.message})`;
        return k?.status === wanted && (!argo || a?.status === argo) ? o : undefined;
      },
      { timeoutMs, intervalMs: 500 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}; last seen: ${last}`);
    });
    console.log(`  ${name}: ${last}`);
    if (RECORD && argo) recordFixture(name, { state, kstatus: wanted, argocd: argo, object });
    return object;
  }

  const get =
    <T extends KubeObject>(type: ResourceType<T>, name: string) =>
    (): Promise<T | undefined> =>
      client.get<T>(type, ns, name).catch(() => undefined);

  /** The BasicReplicaSet of a deployment that runs its current template. */
  const newestSet = (deploymentName: string) => async (): Promise<BasicReplicaSet | undefined> => {
    const sets = (await client.list<BasicReplicaSet>(BASIC_REPLICA_SET, { namespace: ns })).items.filter(
      (s) => s.metadata.ownerReferences?.some((r) => r.name === deploymentName),
    );
    return sets.sort((a, b) =>
      String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp)),
    )[0];
  };

  const backupOf = (machineName: string) => async (): Promise<VolumeBackup | undefined> =>
    (await client.list<VolumeBackup>(VOLUME_BACKUP, { namespace: ns })).items.find(
      (b) => b.spec.machineName === machineName,
    );

  it('BasicDeployment and BasicReplicaSet: InProgress while rolling out, Current when ready, Failed past the progress deadline; paused is Suspended for Argo CD', async (t) => {
    if ((await testCluster()).provider !== 'local')
      return t.skip("never-ready pods need the local provider's kwok stage");
    const neverReady = { [NEVER_READY_ANNOTATION]: 'true' };
    await client.create(BASIC_DEPLOYMENT, deployment(ns, 'web'));
    await client.create(
      BASIC_DEPLOYMENT,
      deployment(ns, 'rolling', { progressDeadlineSeconds: 600 }, neverReady),
    );
    await client.create(
      BASIC_DEPLOYMENT,
      deployment(ns, 'stuck', { progressDeadlineSeconds: 3 }, neverReady),
    );

    await expectHealth(
      'basicdeployment-rolling-out',
      'pods that never become Ready, within the progress deadline',
      get<BasicDeployment>(BASIC_DEPLOYMENT, 'rolling'),
      'InProgress',
      'Progressing',
    );
    await expectHealth(
      'basicreplicaset-not-ready',
      'a set whose pods never become Ready',
      newestSet('rolling'),
      'InProgress',
      'Progressing',
    );
    await expectHealth(
      'basicdeployment-ready',
      'every replica updated and available',
      get<BasicDeployment>(BASIC_DEPLOYMENT, 'web'),
      'Current',
      'Healthy',
    );
    await expectHealth(
      'basicreplicaset-ready',
      'every replica available',
      newestSet('web'),
      'Current',
      'Healthy',
    );
    const stuck = await expectHealth(
      'basicdeployment-progress-deadline-exceeded',
      'a rollout past its progress deadline',
      get<BasicDeployment>(BASIC_DEPLOYMENT, 'stuck'),
      'Failed',
      'Degraded',
    );
    const stalled = stuck.status?.conditions?.find((c) => c.type === 'Stalled');
    assert.equal(stalled?.status, 'True');
    assert.equal(stalled?.reason, 'ProgressDeadlineExceeded');

    await client.patch(BASIC_DEPLOYMENT, {
      namespace: ns,
      name: 'web',
      patchType: 'merge',
      body: { spec: { paused: true } },
    });
    await expectHealth(
      'basicdeployment-paused',
      'paused after its rollout completed',
      async () => {
        const d = await get<BasicDeployment>(BASIC_DEPLOYMENT, 'web')();
        return d?.status?.observedGeneration === d?.metadata.generation ? d : undefined;
      },
      'Current',
      'Suspended',
    );
  });

  it('Machine, PodMachine and VolumeBackup: InProgress while provisioning or copying, Current when ready or completed, Failed on a terminal failure', async () => {
    const oneVolume = (storageClassName?: string) => [
      { name: 'data', size: '1Gi', mountPath: '/data', ...(storageClassName ? { storageClassName } : {}) },
    ];
    // A pod of the PodMachine's name that it does not control: a terminal failure (PodConflict).
    await client.create<V1Pod>(CoreTypes.Pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'taken', namespace: ns },
      spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
    });
    await client.create(MACHINE, machine(ns, 'taken', { volumes: oneVolume(NOWHERE) }));
    await client.create(MACHINE, machine(ns, 'pending', { volumes: oneVolume(NOWHERE) }));
    await client.create(MACHINE, machine(ns, 'vm', { volumes: oneVolume() }));

    await expectHealth(
      'machine-provisioning',
      'claims that never bind',
      get(MACHINE, 'pending'),
      'InProgress',
      'Progressing',
    );
    await expectHealth(
      'podmachine-provisioning',
      'claims that never bind',
      get(POD_MACHINE, 'pending'),
      'InProgress',
      'Progressing',
    );
    // Deleted: the Machine waits for its backup, which cannot copy a claim that never bound.
    await client.delete(MACHINE, ns, 'pending');
    await expectHealth(
      'machine-deleting',
      'being deleted',
      get(MACHINE, 'pending'),
      'Terminating',
      undefined,
    );
    await expectHealth(
      'volumebackup-running',
      'a copy waiting for its claims, within the backup deadline',
      backupOf('pending'),
      'InProgress',
      'Progressing',
    );

    const failedPod = await expectHealth(
      'podmachine-failed',
      'a pod of its name it does not control (PodConflict)',
      get(POD_MACHINE, 'taken'),
      'Failed',
      'Degraded',
    );
    assert.equal((failedPod as { status?: { failureReason?: string } }).status?.failureReason, 'PodConflict');
    const failedMachine = await expectHealth(
      'machine-failed',
      'its provider reports a terminal failure (InfrastructureFailed)',
      get<KubeObject & { status?: { conditions?: Array<{ type: string; reason: string }> } }>(
        MACHINE,
        'taken',
      ),
      'Failed',
      'Degraded',
    );
    assert.equal(
      failedMachine.status?.conditions?.find((c) => c.type === 'Stalled')?.reason,
      'InfrastructureFailed',
    );

    await expectHealth('machine-running', 'Running and Ready', get(MACHINE, 'vm'), 'Current', 'Healthy');
    await expectHealth(
      'podmachine-running',
      'pod running and ready',
      get(POD_MACHINE, 'vm'),
      'Current',
      'Healthy',
    );

    await expectHealth(
      'podmachine-stopped',
      'stopped on request while its Machine is deleted',
      async () => {
        const pm = await get<KubeObject & { status?: { stopped?: boolean } }>(POD_MACHINE, 'pending')();
        return pm?.status?.stopped ? pm : undefined;
      },
      'InProgress',
      'Suspended',
    );
    const deadline = await expectHealth(
      'volumebackup-deadline-exceeded',
      'a copy that cannot start before the backup deadline (DeadlineExceeded)',
      backupOf('pending'),
      'Failed',
      'Degraded',
    );
    assert.equal(deadline.status?.conditions?.find((c) => c.type === 'Stalled')?.reason, 'DeadlineExceeded');

    // A backup of a claim that does not exist: failed for good (BackupFailed), nothing to retry.
    await client.create<VolumeBackup>(VOLUME_BACKUP, {
      apiVersion: VOLUME_BACKUP.apiVersion,
      kind: VOLUME_BACKUP.kind,
      metadata: { name: 'orphan', namespace: ns },
      spec: { volumes: [{ name: 'data', claimName: 'gone-data' }] },
    });
    const failed = await expectHealth(
      'volumebackup-failed',
      'its source claim does not exist (BackupFailed)',
      get<VolumeBackup>(VOLUME_BACKUP, 'orphan'),
      'Failed',
      'Degraded',
    );
    assert.equal(failed.status?.conditions?.find((c) => c.type === 'Stalled')?.reason, 'BackupFailed');

    await client.delete(MACHINE, ns, 'vm');
    await expectHealth('volumebackup-completed', 'every volume copied', backupOf('vm'), 'Current', 'Healthy');
  });

  // Last: the quota holds the namespace's pods at what runs now.
  it('a BasicReplicaSet whose pod creates a ResourceQuota refuses: kstatus InProgress (retried), Argo CD Degraded', async () => {
    await createQuota(client, ns, 'no-more-pods', { pods: '0' });
    await client.create(BASIC_DEPLOYMENT, deployment(ns, 'crowd', { replicas: 1 }));
    await expectHealth(
      'basicreplicaset-replica-failure',
      'pod creates refused by a ResourceQuota (ReplicaFailure, FailedCreate)',
      async () => {
        const set = await newestSet('crowd')();
        const failure = set?.status?.conditions?.find((c) => c.type === 'ReplicaFailure');
        return failure?.status === 'True' ? set : undefined;
      },
      'InProgress',
      'Degraded',
    );
  });
});
