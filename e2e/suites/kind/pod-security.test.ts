import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe } from 'node:test';
import type {
  EventsV1Event,
  V1Job,
  V1Namespace,
  V1PersistentVolumeClaim,
  V1Pod,
} from '@kubernetes/client-node';
import type {
  BasicDeployment,
  Condition,
  Machine,
  MachineSpec,
  PodMachine,
  VolumeBackup,
} from '../../../src/apis/index.ts';
import {
  GiveUp,
  KIND_ONLY,
  KindRelease,
  check as kindCheck,
  note,
  podReady,
  restrictedContainerSecurity,
  restrictedPodSecurity,
  seconds,
  waitForMachineReady,
} from '../support/kind.ts';

/**
 * Pod Security `restricted` enforced on both the release namespace and the workload namespace
 * (pod-security.kubernetes.io/enforce=restricted). Everything that can comply runs: the operator's
 * own pods, the chart's `helm test` pod, the pods of a BasicDeployment whose template complies (the
 * user's part), a Machine with no security fields at all (its pod gets the restricted defaults), and
 * the operator's copy Jobs, for that Machine's backup and for a restore, after which the restored
 * Machine runs and reads what the first one wrote. What cannot comply says so at once with its reason
 * instead of hanging: a Machine asking for a privileged container is refused, which the PodMachine
 * reports as the transient PodRefused with a Warning Event, retried with backoff, and the Machine
 * mirrors (InfrastructureReady and Ready, phase Provisioning); a BasicDeployment whose template
 * breaks the profile reports ReplicaFailure/FailedCreate.
 */

const PSA_REFUSAL = /violates PodSecurity "restricted:latest"/;

describe('Pod Security restricted in the release and workload namespaces (kind)', { skip: KIND_ONLY }, () => {
  let release: KindRelease;
  let ns: string;
  let backupName = '';
  let token = '';
  const image = () => release.cluster.images?.workload ?? 'busybox:1.36';

  before(async () => {
    release = await KindRelease.create({ topic: 'psa', podSecurity: 'restricted' });
    await release.install();
    ns = release.workloadNamespace;
  });

  after(async () => {
    await release?.cleanup();
  });

  const check = (name: string, timeoutMs: number, body: () => Promise<void>) =>
    kindCheck(() => release, name, timeoutMs, body);

  check(
    'both namespaces enforce restricted: a pod without a securityContext is refused',
    60_000,
    async () => {
      for (const namespace of [release.namespace, ns]) {
        const labels =
          (await release.tools.getJson<V1Namespace>([`namespace/${namespace}`])).metadata?.labels ?? {};
        assert.equal(
          labels['pod-security.kubernetes.io/enforce'],
          'restricted',
          `${namespace} enforces restricted`,
        );
        // Server-side dry run: admission runs, nothing is created.
        const probe = await release.tools.kubectl(
          ['create', '--dry-run=server', '-n', namespace, '-f', '-'],
          JSON.stringify({
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: 'psa-probe' },
            spec: { containers: [{ name: 'c', image: image(), command: ['true'] }] },
          }),
        );
        assert.notEqual(probe.code, 0, `a plain pod is refused in ${namespace}`);
        assert.match(probe.stderr, PSA_REFUSAL);
      }
    },
  );

  check('the operator pods run and become Ready there', 150_000, async () => {
    const pods = await release.waitFor(
      'two Running and Ready operator pods',
      async () => {
        const pods = await release.operatorPods();
        return pods.length === 2 && pods.every((p) => p.status?.phase === 'Running' && podReady(p)) && pods;
      },
      { timeoutMs: 120_000, namespace: release.namespace },
    );
    assert.deepEqual(await release.unexpectedRestarts(pods), [], 'no operator pod restarted but by design');
    assert.ok((await release.lease())?.pod, 'one of them leads');
  });

  check('a BasicDeployment whose template complies runs its pods', 150_000, async () => {
    await release.apply(basicDeployment(ns, 'compliant', image(), true));
    await release.waitFor(
      'basicdeployment/compliant to be Ready with 2 Running pods',
      async () => {
        const bd = await release.get<BasicDeployment>('basicdeployment/compliant');
        if (condition(bd, 'Ready')?.status !== 'True') return false;
        const pods = await release.list<V1Pod>('pods', ns, 'app=compliant');
        return pods.length === 2 && pods.every((p) => p.status?.phase === 'Running' && podReady(p));
      },
      { timeoutMs: 120_000, refs: ['basicdeployment/compliant'] },
    );
  });

  check('a BasicDeployment whose template breaks the profile reports FailedCreate', 120_000, async () => {
    await release.apply(basicDeployment(ns, 'noncompliant', image(), false));
    const bd = await release.waitFor(
      'basicdeployment/noncompliant to report ReplicaFailure',
      async () => {
        const bd = await release.get<BasicDeployment>('basicdeployment/noncompliant');
        return condition(bd, 'ReplicaFailure')?.status === 'True' && bd;
      },
      { timeoutMs: 90_000, refs: ['basicdeployment/noncompliant'] },
    );
    const failure = condition(bd, 'ReplicaFailure');
    assert.equal(failure?.reason, 'FailedCreate');
    assert.match(failure?.message ?? '', PSA_REFUSAL);
    assert.equal(condition(bd, 'Ready')?.status, 'False');
    assert.equal((await release.list<V1Pod>('pods', ns, 'app=noncompliant')).length, 0, 'no pod exists');
    const event = await waitForEvent(release, 'BasicReplicaSet', 'FailedCreate', /^noncompliant-/);
    assert.equal(event.type, 'Warning');
    assert.match(event.note ?? '', PSA_REFUSAL);
  });

  check('a Machine with no security fields runs there with the restricted defaults', 150_000, async () => {
    const created = Date.now();
    await release.apply(machine(ns, 'plain', image()));
    await waitForMachineReady(release, 'plain', 120_000);
    note(`machine/plain Running and Ready ${seconds(Date.now() - created)} after its creation`);
    const pod = await release.get<V1Pod>('pod/plain');
    assert.equal(pod.spec?.securityContext?.runAsNonRoot, true);
    assert.equal(pod.spec?.securityContext?.seccompProfile?.type, 'RuntimeDefault');
    const container = pod.spec?.containers[0];
    assert.equal(container?.securityContext?.allowPrivilegeEscalation, false);
    assert.deepEqual(container?.securityContext?.capabilities?.drop, ['ALL']);
    assert.equal(pod.spec?.automountServiceAccountToken, false);
    token = randomBytes(8).toString('hex');
    await release.kubectlOk([
      'exec',
      'plain',
      '-n',
      ns,
      '-c',
      'machine',
      '--',
      'sh',
      '-c',
      `echo ${token} > /data/token && chmod 0600 /data/token && sync`,
    ]);
  });

  check(
    'a Machine asking for a privileged pod is refused: PodRefused (transient) on the Machine and a Warning Event',
    150_000,
    async () => {
      const created = Date.now();
      await release.apply(
        machine(ns, 'refused', image(), undefined, { securityContext: { privileged: true } }),
      );
      const m = await release.waitFor(
        'machine/refused to report PodRefused',
        async () => {
          const m = await release.get<Machine>('machine/refused');
          return condition(m, 'InfrastructureReady')?.reason === 'PodRefused' && m;
        },
        { timeoutMs: 90_000, refs: ['machine/refused', 'podmachine/refused'] },
      );
      note(`machine/refused reported PodRefused ${seconds(Date.now() - created)} after its creation`);
      // Not a terminal failure: the PodMachine retries with backoff, and the Machine waits for it.
      assert.equal(m.status?.phase, 'Provisioning');
      assert.equal(m.status?.ready, false);
      const ready = condition(m, 'Ready');
      assert.equal(ready?.status, 'False');
      assert.equal(ready?.reason, 'PodRefused', 'Ready says what the Machine waits for');
      assert.match(ready?.message ?? '', PSA_REFUSAL);
      assert.match(ready?.message ?? '', /privileged/);
      const podMachine = await release.get<PodMachine>('podmachine/refused');
      assert.equal(podMachine.status?.failureReason, undefined, 'no terminal failure');
      assert.equal(await release.find<V1Pod>('pod/refused'), undefined, 'no Machine pod exists');
      const claims = await release.list<V1PersistentVolumeClaim>('persistentvolumeclaims', ns);
      assert.ok(
        claims.some((c) => c.metadata?.name === 'refused-data'),
        'the claim was created (claims are not subject to Pod Security)',
      );
      const event = await waitForEvent(release, 'PodMachine', 'PodRefused', /^refused$/);
      assert.equal(event.type, 'Warning');
      assert.match(event.note ?? '', PSA_REFUSAL);
    },
  );

  check(
    'deleting the running Machine backs it up: the copy Job pods run under restricted',
    240_000,
    async () => {
      const m = await release.get<Machine>('machine/plain');
      await release.kubectlOk(['delete', 'machine/plain', '-n', ns, '--wait=false']);
      const backup = await release.waitFor(
        'the VolumeBackup of machine/plain to complete',
        async () => {
          const backups = await release.list<VolumeBackup>('volumebackups', ns);
          const mine = backups.find((b) => b.spec.machineUID === m.metadata.uid);
          if (mine?.status?.phase === 'Failed')
            throw new GiveUp(`the backup failed: ${JSON.stringify(mine.status)}`);
          return mine?.status?.phase === 'Completed' && mine;
        },
        { timeoutMs: 180_000, refs: ['machine/plain', 'podmachine/plain', 'volumebackups'] },
      );
      backupName = backup.metadata.name ?? '';
      assert.equal(backup.status?.attempts ?? 1, 1, 'the first copy attempt succeeded');
      const jobs = (await release.list<V1Job>('jobs', ns)).filter((j) =>
        j.metadata?.name?.startsWith(`${backupName}-`),
      );
      assert.ok(jobs.length > 0, 'copy Jobs exist');
      for (const job of jobs) assertJobRan(job);
      await release.waitFor(
        'machine/plain to be gone',
        async () => (await release.find<Machine>('machine/plain')) === undefined,
        { timeoutMs: 60_000, refs: ['machine/plain', 'podmachine/plain'] },
      );
      assert.equal(
        await release.find<PodMachine>('podmachine/plain'),
        undefined,
        'its PodMachine went before the Machine',
      );
    },
  );

  check(
    'a restore there runs its Job, then the restored Machine runs and reads the data',
    240_000,
    async () => {
      assert.ok(backupName, 'the backup of the previous check exists');
      await release.apply(machine(ns, 'restored', image(), { volumeBackup: backupName, volume: 'data' }));
      await waitForMachineReady(release, 'restored', 120_000);
      const podMachine = await release.get<PodMachine>('podmachine/restored');
      assert.equal(condition(podMachine, 'VolumesReady')?.status, 'True', 'the volume was restored first');
      const claim = await release.get<V1PersistentVolumeClaim>('persistentvolumeclaim/restored-data');
      assert.equal(
        claim.metadata?.annotations?.['infra.basicoperator.dev/restored-from'],
        `${backupName}/data`,
      );
      assertJobRan(await release.get<V1Job>('job/restored-data-restore'));
      const read = await release.kubectlOk([
        'exec',
        'restored',
        '-n',
        ns,
        '-c',
        'machine',
        '--',
        'cat',
        '/data/token',
      ]);
      assert.equal(read.trim(), token, 'the 0600 file of the Machine user was restored readable by it');
    },
  );

  check("the chart's helm test pod runs there and passes", 120_000, async () => {
    await release.helmTest();
  });
});

function condition(object: { status?: { conditions?: Condition[] } }, type: string): Condition | undefined {
  return object.status?.conditions?.find((c) => c.type === type);
}

/** A Job the operator created completed: its pod was admitted, ran as the copy user and exited 0. */
function assertJobRan(job: V1Job): void {
  const name = job.metadata?.name;
  const complete = job.status?.conditions?.find((c) => c.type === 'Complete');
  assert.equal(complete?.status, 'True', `Job ${name} completed: ${JSON.stringify(job.status)}`);
  assert.ok((job.status?.succeeded ?? 0) >= 1, `Job ${name} has a succeeded pod`);
  assert.equal(job.spec?.template.spec?.securityContext?.runAsNonRoot, true);
}

/** The events.k8s.io Event of `reason` about a `kind` object whose name matches `name`. */
async function waitForEvent(
  release: KindRelease,
  kind: string,
  reason: string,
  name: RegExp,
): Promise<EventsV1Event> {
  return release.waitFor(
    `a ${reason} Event about a ${kind} named ${name}`,
    async () => {
      const events = await release.list<EventsV1Event>('events.events.k8s.io', release.workloadNamespace);
      return events.find(
        (e) => e.reason === reason && e.regarding?.kind === kind && name.test(e.regarding.name ?? ''),
      );
    },
    { timeoutMs: 30_000 },
  );
}

function machine(
  namespace: string,
  name: string,
  image: string,
  restoreFrom?: { volumeBackup: string; volume: string },
  overrides: Partial<MachineSpec> = {},
): Machine {
  return {
    apiVersion: 'infra.basicoperator.dev/v1alpha1',
    kind: 'Machine',
    metadata: { name, namespace },
    spec: {
      image,
      command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
      volumes: [{ name: 'data', size: '16Mi', mountPath: '/data', ...(restoreFrom ? { restoreFrom } : {}) }],
      ...overrides,
    },
  };
}

function basicDeployment(
  namespace: string,
  name: string,
  image: string,
  compliant: boolean,
): BasicDeployment {
  return {
    apiVersion: 'apps.basicoperator.dev/v1alpha1',
    kind: 'BasicDeployment',
    metadata: { name, namespace },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 1,
          ...(compliant ? { securityContext: restrictedPodSecurity } : {}),
          containers: [
            {
              name: 'main',
              image,
              imagePullPolicy: 'IfNotPresent',
              command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"],
              ...(compliant ? { securityContext: restrictedContainerSecurity } : {}),
            },
          ],
        },
      },
    },
  };
}
