// `kubectl basic` on Machines: a Ready one, one whose readiness probe fails (kwok runs no probes: the
// test writes what the kubelet would, the pod's status and an Unhealthy Event), one whose pod Pod
// Security refuses, one whose provider object does not exist, and a deleted one waiting for a backup
// copy that keeps failing (made as in test/integration/machine/backup-failure.test.ts: claims of a
// StorageClass that does not exist never bind, so copy pods stay unscheduled, and the test fails them
// through the status subresource).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { INFRA_API_VERSION, MACHINE, SKIP_BACKUP_ANNOTATION } from '../../../src/apis/index.ts';
import { CORE } from '../../../src/cli/kubectl-basic/source.ts';
import { registerMachineController } from '../../../src/controllers/machine/index.ts';
import { registerMachineBackupController } from '../../../src/controllers/machinebackup/index.ts';
import { registerPodMachineController } from '../../../src/controllers/podmachine/index.ts';
import { registerVolumeBackupController } from '../../../src/controllers/volumebackup/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { OPERATOR_DEFAULTS } from '../../support/operator-options.ts';
import { startOperatorSuite } from '../../support/suite.ts';
import {
  type MachineSuite,
  machine,
  pods,
  prepareCluster,
  stopMachineSuite,
  waitForGone,
} from '../machine/helpers.ts';
import { kubectlBasic, whyUntil } from './plugin.ts';

describe('kubectl basic on Machines', () => {
  let suite: MachineSuite | undefined;
  let client: KubeClient;
  let ns: string;

  before(async () => {
    await prepareCluster(6);
    suite = await startOperatorSuite('kb-machine', (m) => {
      registerMachineController(m);
      registerPodMachineController(m, OPERATOR_DEFAULTS);
      registerMachineBackupController(m);
      registerVolumeBackupController(m, { ...OPERATOR_DEFAULTS, maxCopyAttempts: 2, retryBackoffMs: 500 });
    });
    ({ client, ns } = suite);
  });
  after(() => stopMachineSuite(suite));

  it('a Ready Machine: nothing blocks it; its tree holds the PodMachine, its claims and its pod', async () => {
    await client.create(MACHINE, machine(ns, 'web'));
    const ready = await whyUntil(['machine/web', '-n', ns], /nothing blocks it/);
    assert.equal(ready.code, 0);
    const tree = await kubectlBasic(['tree', 'machines/web', '-n', ns]);
    console.log(tree.stdout);
    assert.equal(tree.code, 0);
    const names = tree.stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.replace(/^[│├└─ ]+/, '').split(/\s+/)[0]);
    assert.deepEqual(names, [
      'Machine/web',
      'PodMachine/web',
      'PersistentVolumeClaim/web-data',
      'PersistentVolumeClaim/web-logs',
      'Pod/web',
    ]);
  });

  it("a Machine whose readiness probe fails: the pod's container and the kubelet's Unhealthy Event, quoted with its count", async () => {
    await client.create(MACHINE, machine(ns, 'probe', { volumes: [] }));
    await whyUntil(['machine/probe', '-n', ns], /nothing blocks it/);
    const pod = await client.get<V1Pod>(CoreTypes.Pod, ns, 'probe');
    const notReady = (pod.status?.conditions ?? []).map((c) =>
      c.type === 'Ready' || c.type === 'ContainersReady'
        ? {
            ...c,
            status: 'False',
            reason: 'ContainersNotReady',
            message: 'containers with unready status: [machine]',
          }
        : c,
    );
    const containers = (pod.status?.containerStatuses ?? []).map((c) => ({
      ...c,
      ready: false,
      started: true,
    }));
    await client.patch<V1Pod>(CoreTypes.Pod, {
      namespace: ns,
      name: 'probe',
      patchType: 'merge',
      body: { status: { conditions: notReady, containerStatuses: containers } },
      subresource: 'status',
    });
    const now = new Date().toISOString();
    const message = 'Readiness probe failed: /var/run/postgresql:5432 - no response';
    await client.create(CORE.Event, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `probe.readiness-${Date.now()}`, namespace: ns },
      involvedObject: {
        apiVersion: 'v1',
        kind: 'Pod',
        name: 'probe',
        namespace: ns,
        uid: pod.metadata?.uid,
        fieldPath: 'spec.containers{machine}',
      },
      type: 'Warning',
      reason: 'Unhealthy',
      message,
      count: 7,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: 'kubelet', host: pod.spec?.nodeName },
    });
    const result = await whyUntil(['machine/probe', '-n', ns], /readiness probe fails/);
    console.log(result.stdout);
    assert.equal(result.code, 1);
    const lines = result.stdout.trim().split('\n');
    assert.equal(
      lines[0],
      `Machine/probe is blocked: Pod/probe: container machine is not ready: its readiness probe fails (x7): ${message}`,
    );
    assert.equal(lines[1], '  path: Machine/probe -> PodMachine/probe -> Pod/probe');
    assert.ok(
      lines.includes('  Pod/probe: container machine ready=false started=true restartCount=0'),
      result.stdout,
    );
    assert.match(result.stdout, /Pod\/probe: event Warning Unhealthy \d+s ago \(x7\): \(the same message\)/);
  });

  it("a Machine whose pod Pod Security refuses: the PodMachine's PodRefused condition quotes the API server", async () => {
    await setPodSecurity(client, ns, 'restricted');
    try {
      await client.create(
        MACHINE,
        machine(ns, 'priv', { volumes: [], securityContext: { privileged: true } }),
      );
      const result = await whyUntil(['machine/priv', '-n', ns], /PodRefused/);
      console.log(result.stdout);
      assert.equal(result.code, 1);
      assert.match(
        result.stdout,
        /^Machine\/priv is blocked: PodMachine\/priv cannot create its pod: PodRefused: the API server refused pod priv: .*violates PodSecurity "restricted:latest": privileged/,
      );
      assert.match(result.stdout, /path: Machine\/priv -> PodMachine\/priv\n/);
      assert.match(result.stdout, /PodMachine\/priv: condition Ready=False PodRefused: /);
    } finally {
      await setPodSecurity(client, ns, null);
    }
  });

  it('a Machine whose provider object does not exist: InfrastructureNotFound', async () => {
    await client.create(MACHINE, {
      apiVersion: MACHINE.apiVersion,
      kind: MACHINE.kind,
      metadata: { name: 'orphan', namespace: ns },
      spec: { infrastructureRef: { apiVersion: INFRA_API_VERSION, kind: 'PodMachine', name: 'ghost' } },
    });
    const result = await whyUntil(['machine/orphan', '-n', ns], /InfrastructureNotFound/);
    console.log(result.stdout);
    assert.equal(result.code, 1);
    assert.match(
      result.stdout,
      /^Machine\/orphan is blocked: Machine\/orphan waits: InfrastructureNotFound: .*ghost/,
    );
    const tree = await kubectlBasic(['tree', 'machine/orphan', '-n', ns, '-o', 'json']);
    const json = JSON.parse(tree.stdout) as {
      items: Array<{ children: Array<{ kind: string; name: string; missing: boolean }> }>;
    };
    assert.deepEqual(json.items[0]?.children, [
      {
        kind: 'PodMachine',
        name: 'ghost',
        namespace: ns,
        ready: false,
        status: 'NotFound',
        reason: 'NotFound',
        message: 'not found',
        creationTimestamp: null,
        revision: null,
        missing: true,
        children: [],
      },
    ]);
  });

  it('a Machine referencing a kind that declares no contract: ContractNotDeclared', async () => {
    await client.create(MACHINE, {
      apiVersion: MACHINE.apiVersion,
      kind: MACHINE.kind,
      metadata: { name: 'alien', namespace: ns },
      spec: { infrastructureRef: { apiVersion: 'nothing.example.dev/v1', kind: 'Widget', name: 'w' } },
    });
    const result = await whyUntil(['machine/alien', '-n', ns], /ContractNotDeclared/);
    console.log(result.stdout);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /^Machine\/alien is blocked: Machine\/alien waits: ContractNotDeclared: /);
    const tree = await kubectlBasic(['tree', 'machine/alien', '-n', ns]);
    assert.match(tree.stdout, /└─Widget\/w +False +NotFound +NotFound/);
  });

  it('a deleted Machine waiting for a backup copy that keeps failing: the VolumeBackup and its failed Job', async () => {
    const volumes = [{ name: 'data', size: '1Gi', mountPath: '/data', storageClassName: 'no-such-class' }];
    await client.create(MACHINE, machine(ns, 'doomed', { volumes }));
    await whyUntil(['machine/doomed', '-n', ns], /is blocked/);
    const stop = new AbortController();
    const failing = failCopyPods(client, ns, stop.signal);
    try {
      await client.delete(MACHINE, ns, 'doomed');
      // The Machine's condition relays the VolumeBackup's failure a status write later: wait for it.
      const result = await whyUntil(
        ['machine/doomed', '-n', ns],
        /Machine\/doomed: condition VolumeBackup=False BackupFailed/,
        90_000,
      );
      console.log(result.stdout);
      assert.equal(result.code, 1);
      assert.match(
        result.stdout,
        /^Machine\/doomed is blocked: Machine\/doomed waits for its backup: VolumeBackup\/doomed-[0-9a-f]{8} failed: BackupFailed: /,
      );
      assert.match(result.stdout, /path: Machine\/doomed -> VolumeBackup\/doomed-[0-9a-f]{8}/);
      assert.match(result.stdout, /Machine\/doomed: condition VolumeBackup=False BackupFailed/);
      assert.match(
        result.stdout,
        /Job\/doomed-[0-9a-f]{8}-data-\d condition Failed=True BackoffLimitExceeded/,
      );
      const tree = await kubectlBasic(['tree', 'machine/doomed', '-n', ns]);
      console.log(tree.stdout);
      assert.match(tree.stdout, /VolumeBackup\/doomed-[0-9a-f]{8} +False +Failed +BackupFailed/);
      assert.match(tree.stdout, /Job\/doomed-[0-9a-f]{8}-data-1 +False +Failed +BackoffLimitExceeded/);
      // What BasicOperatorVolumeBackupFailed alerts on, computed from the manager's cache at the scrape.
      const failedGauge = await suite!.manager.registry
        .getSingleMetric('basic_operator_volumebackups')
        ?.get();
      assert.equal(failedGauge?.values.find((v) => v.labels.phase === 'Failed')?.value, 1);
    } finally {
      stop.abort();
      await failing;
    }
    await client.patch(MACHINE, {
      namespace: ns,
      name: 'doomed',
      patchType: 'merge',
      body: { metadata: { annotations: { [SKIP_BACKUP_ANNOTATION]: 'true' } } },
    });
    await waitForGone(client, ns, 'doomed');
  });
});

/** Labels the namespace to enforce a Pod Security level (null: none). */
async function setPodSecurity(client: KubeClient, ns: string, level: string | null): Promise<void> {
  await client.patch(CoreTypes.Namespace, {
    namespace: undefined,
    name: ns,
    patchType: 'merge',
    body: { metadata: { labels: { 'pod-security.kubernetes.io/enforce': level } } },
  });
}

/** Fails every unscheduled copy pod, as a crashing copy would, until `signal` aborts. */
async function failCopyPods(client: KubeClient, ns: string, signal: AbortSignal): Promise<void> {
  const failed = new Set<string>();
  while (!signal.aborted) {
    for (const pod of await pods(client, ns)) {
      const name = pod.metadata?.name ?? '';
      if (pod.metadata?.labels?.['infra.basicoperator.dev/role'] !== 'backup') continue;
      if (pod.status?.phase !== 'Pending' || failed.has(name)) continue;
      await client
        .patch<V1Pod>(CoreTypes.Pod, {
          namespace: ns,
          name,
          patchType: 'merge',
          body: { status: { phase: 'Failed', reason: 'CopyCrashed', message: 'cp: read error: I/O error' } },
          subresource: 'status',
        })
        .then(() => failed.add(name))
        .catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
