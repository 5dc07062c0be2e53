import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Deployment, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { load } from 'js-yaml';
import {
  AGGREGATE_TO_MANAGER_LABEL,
  type BasicDeployment,
  type BasicReplicaSet,
  type Machine,
  type PodMachine,
  type VolumeBackup,
} from '../../src/apis/index.ts';
import { CONTROLLER_NAME as BASIC_DEPLOYMENT_CONTROLLER } from '../../src/controllers/basicdeployment/index.ts';
import { CONTROLLER_NAME as BASIC_REPLICA_SET_CONTROLLER } from '../../src/controllers/basicreplicaset/index.ts';
import { CONTROLLER_NAME as MACHINE_CONTROLLER } from '../../src/controllers/machine/index.ts';
import { CONTROLLER_NAME as MACHINE_BACKUP_CONTROLLER } from '../../src/controllers/machinebackup/index.ts';
import { CONTROLLER_NAME as POD_MACHINE_CONTROLLER } from '../../src/controllers/podmachine/index.ts';
import { CONTROLLER_NAME as VOLUME_BACKUP_CONTROLLER } from '../../src/controllers/volumebackup/index.ts';
import { LocalProvider } from '../providers/local/index.ts';
import type { ClusterInfo } from '../providers/provider.ts';
import { find, parseMetrics } from '../support/prometheus-text.ts';
import { queueReading } from '../support/queue-metrics.ts';
import { waitFor } from '../support/wait.ts';
import { e2eCluster } from './support/cluster.ts';
import { ClusterTools } from './support/kube.ts';
import { rbacDenials } from './support/logs.ts';
import { LocalOperator, type OperatorUnderTest, operatorFor } from './support/operator.ts';
import { declaredPermissions, missingFrom, parseCanIList } from './support/rbac.ts';
import {
  CRD_DIR,
  HelmRelease,
  installCrds,
  type Manifest,
  operatorDeployment,
  SAMPLES_DIR,
  tearDownRelease,
  type Values,
} from './support/release.ts';

/**
 * The operator as users get it: `helm install` of charts/basic-operator, the samples of config/samples,
 * day-2 operations with kubectl, `helm upgrade` and `helm uninstall`, with the chart's RBAC and
 * nothing more (see docs/e2e.md). The scenarios run in order and build on each other.
 */

const id = randomBytes(3).toString('hex');
const RELEASE = `bo-e2e-${id}`;
const RELEASE_NS = RELEASE;
const WORKLOAD_NS = `${RELEASE}-workload`;
const SAMPLE_DEPLOYMENT = 'basicdeployment-sample';
const SAMPLE_MACHINE = 'machine-sample';
// Kubeadm's pause, preloaded in every kind node (the samples run kind's sandbox pause, 3.10).
const IMAGE_V2 = 'registry.k8s.io/pause:3.10.2';
const LEASE = `${RELEASE}.basicoperator.dev`;
/** The controllers that reconcile each kind of object in the workload namespace. */
const CONTROLLERS_OF: Record<string, string[]> = {
  basicdeployments: [BASIC_DEPLOYMENT_CONTROLLER],
  basicreplicasets: [BASIC_REPLICA_SET_CONTROLLER],
  machines: [MACHINE_CONTROLLER, MACHINE_BACKUP_CONTROLLER],
  podmachines: [POD_MACHINE_CONTROLLER],
  volumebackups: [VOLUME_BACKUP_CONTROLLER],
};

describe(`basic-operator end to end (${process.env.E2E_PROVIDER ?? 'local'} provider)`, () => {
  let cluster: ClusterInfo;
  let tools: ClusterTools;
  let release: HelmRelease;
  let operator: OperatorUnderTest;
  let manifests: Manifest[] = [];
  let workdir: string;
  let installed = false;
  let failures = 0;
  let backupName: string | undefined;

  const values = (extra: Values = {}): Values => ({
    ...operator.values,
    watchNamespaces: [WORKLOAD_NS],
    leaderElection: { id: LEASE },
    ...extra,
  });
  const serviceAccount = () => ({
    name: operatorDeployment(manifests).spec?.template.spec?.serviceAccountName ?? '',
    namespace: RELEASE_NS,
  });

  /** One scenario: skipped when the install failed; a failure carries the operator's last log lines. */
  function scenario(name: string, timeoutMs: number, body: () => Promise<void>, needsInstall = true): void {
    it(name, { timeout: timeoutMs }, async (t) => {
      if (needsInstall && !installed) {
        t.skip('the operator was not installed');
        return;
      }
      try {
        await body();
      } catch (err) {
        failures += 1;
        if (err instanceof Error && operator) err.message += `\n${operator.describe()}`;
        throw err;
      }
    });
  }

  before(async () => {
    cluster = await e2eCluster();
    tools = new ClusterTools(cluster);
    workdir = mkdtempSync(join(tmpdir(), `${RELEASE}-`));
    release = new HelmRelease(tools, RELEASE, RELEASE_NS, workdir);
    operator = operatorFor(cluster, workdir);
    process.stderr.write(
      `[e2e] release ${RELEASE}, workload namespace ${WORKLOAD_NS}, operator: ${operator.where}, files: ${workdir}\n`,
    );
  });

  after(async () => {
    await operator?.stop().catch(() => undefined);
    if (tools) await tearDownRelease(tools, release, WORKLOAD_NS);
    if (workdir && failures === 0) rmSync(workdir, { recursive: true, force: true });
  });

  // ---------------------------------------------------------------------------------------------

  scenario(
    'installs with helm into a fresh namespace; the operator serves /readyz',
    300_000,
    async () => {
      await timed('CRDs applied', () => installCrds(tools));
      for (const namespace of [RELEASE_NS, WORKLOAD_NS]) {
        await tools.kubectlOk(['create', 'namespace', namespace]);
        await tools.kubectlOk(['label', 'namespace', namespace, 'basicoperator.dev/test=true']);
      }
      manifests = await release.template(values());
      await timed('helm install', () => release.install(values()));
      installed = true;
      await timed('operator started', () => operator.start(operatorDeployment(manifests)));
      await timed('/readyz', () =>
        waitFor('the operator to answer /readyz with 200', async () => (await operator.readyz()).ok, {
          timeoutMs: 90_000,
        }),
      );
    },
    false,
  );

  scenario(
    'the ServiceAccount holds exactly the rules of the chart and of the aggregated provider roles (kubectl auth can-i --list)',
    60_000,
    async () => {
      const sa = serviceAccount();
      // The workload namespace gets the manager ClusterRole (aggregated: the chart's base role, and any
      // provider's role labelled aggregate-to-manager), the release namespace the leader-election Role,
      // and every namespace reading CRDs (cluster-scoped; the only ClusterRoleBinding with
      // watchNamespaces).
      // A provider installed in the cluster (e.g. examples/statefulset-provider) ships a ClusterRole with
      // that label: by design the manager role grants its rules too, so they count as declared.
      const providerRoles = (
        await tools.getJson<{ items: Manifest[] }>([
          'clusterroles',
          '-l',
          `${AGGREGATE_TO_MANAGER_LABEL}=true`,
        ])
      ).items.filter(
        (role) => !manifests.some((m) => m.kind === 'ClusterRole' && m.metadata.name === role.metadata.name),
      );
      for (const namespace of [WORKLOAD_NS, RELEASE_NS, 'default']) {
        const declared = declaredPermissions([...manifests, ...providerRoles], sa, namespace);
        const table = await tools.kubectlOk([
          'auth',
          'can-i',
          '--list',
          `--as=system:serviceaccount:${sa.namespace}:${sa.name}`,
          '-n',
          namespace,
        ]);
        const granted = parseCanIList(table);
        assert.deepEqual(missingFrom(declared, granted), [], `declared but not granted in ${namespace}`);
        assert.deepEqual(
          missingFrom(granted, declared),
          [],
          `granted beyond the chart's rules in ${namespace}`,
        );
        if (namespace !== 'default') assert.ok(declared.size > 0, `the chart grants nothing in ${namespace}`);
      }
    },
  );

  scenario('every sample of config/samples reaches Ready', 180_000, async () => {
    if (cluster.provider === 'local') await new LocalProvider(cluster.name).ensureVolumes(20);
    const applied = (await tools.kubectlOk(['apply', '-f', SAMPLES_DIR, '-n', WORKLOAD_NS, '-o', 'name']))
      .split('\n')
      .filter(Boolean);
    assert.equal(applied.length, sampleCount(), `kubectl apply printed: ${applied.join(', ')}`);
    const results = await Promise.all(
      applied.map((object) =>
        tools.kubectl(['wait', '--for=condition=Ready', object, '-n', WORKLOAD_NS, '--timeout=150s']),
      ),
    );
    const notReady: string[] = [];
    for (const [i, result] of results.entries()) {
      if (result.code === 0) continue;
      const status = await tools.kubectl([
        'get',
        applied[i] ?? '',
        '-n',
        WORKLOAD_NS,
        '-o',
        'jsonpath={.status}',
      ]);
      notReady.push(`${applied[i]}: ${result.stderr.trim()}\n  status: ${status.stdout}`);
    }
    assert.deepEqual(notReady, [], 'samples that did not become Ready');
  });

  scenario('kubectl scale scales a BasicDeployment up and down', 180_000, async () => {
    for (const replicas of [5, 3]) {
      await tools.kubectlOk([
        'scale',
        `basicdeployment/${SAMPLE_DEPLOYMENT}`,
        `--replicas=${replicas}`,
        '-n',
        WORKLOAD_NS,
      ]);
      await waitForRollout(replicas);
    }
  });

  scenario('a rolling update to a new image completes', 180_000, async () => {
    await tools.kubectlOk([
      'patch',
      `basicdeployment/${SAMPLE_DEPLOYMENT}`,
      '-n',
      WORKLOAD_NS,
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: IMAGE_V2 }]),
    ]);
    await waitForRollout(3, IMAGE_V2);
    const sets = await setsOf(SAMPLE_DEPLOYMENT);
    const live = sets.filter((s) => (s.spec.replicas ?? 0) > 0);
    assert.equal(live.length, 1, 'one BasicReplicaSet keeps replicas after the rollout');
    assert.equal(live[0]?.spec.template.spec?.containers[0]?.image, IMAGE_V2);
    assert.ok(sets.length >= 2, 'the old BasicReplicaSet is kept as history');
  });

  scenario('helm upgrade with changed values recreates nothing', 240_000, async () => {
    const before = await uidsInWorkloadNamespace();
    assert.ok(
      Object.keys(before).some((k) => k.startsWith('Pod/')),
      'pods exist before the upgrade',
    );
    const holderBefore = await leaseHolder();
    const upgraded = values({ logLevel: 'debug', concurrency: { default: 3 } });
    manifests = await release.template(upgraded);
    await release.upgrade(upgraded);
    const live = await tools.getJson<V1Deployment>([
      'deployment',
      operatorDeployment(manifests).metadata.name,
      '-n',
      RELEASE_NS,
    ]);
    const env = live.spec?.template.spec?.containers[0]?.env ?? [];
    assert.equal(env.find((e) => e.name === 'BASIC_OPERATOR_LOG_LEVEL')?.value, 'debug');
    await operator.rollTo(operatorDeployment(manifests));
    await waitFor(
      'the upgraded operator to answer /readyz with 200',
      async () => (await operator.readyz()).ok,
      {
        timeoutMs: 90_000,
      },
    );
    await waitFor('the upgraded operator to hold the Lease', async () => {
      const holder = await leaseHolder();
      return holder !== '' && holder !== holderBefore;
    });
    await waitForOperatorAtRest();
    assert.deepEqual(await uidsInWorkloadNamespace(), before, 'objects were recreated after the upgrade');
    // And it reconciles: a scale-up keeps every pod there was.
    await tools.kubectlOk([
      'scale',
      `basicdeployment/${SAMPLE_DEPLOYMENT}`,
      '--replicas=4',
      '-n',
      WORKLOAD_NS,
    ]);
    await waitForRollout(4, IMAGE_V2);
    const after = await uidsInWorkloadNamespace();
    for (const [key, uid] of Object.entries(before).filter(([k]) => k.startsWith('Pod/'))) {
      assert.equal(after[key], uid, `${key} was replaced by the scale-up`);
    }
  });

  scenario(
    'deleting a Machine backs its volumes up, then lets it go with its PodMachine',
    240_000,
    async () => {
      if (cluster.provider === 'local') await new LocalProvider(cluster.name).ensureVolumes(20);
      const machine = await tools.getJson<Machine>([`machine/${SAMPLE_MACHINE}`, '-n', WORKLOAD_NS]);
      // The sample is inline: realized as a PodMachine of its name, which the Machine controls.
      const podMachine = await tools.getJson<PodMachine>([`podmachine/${SAMPLE_MACHINE}`, '-n', WORKLOAD_NS]);
      const controller = podMachine.metadata.ownerReferences?.find((r) => r.controller);
      assert.equal(controller?.uid, machine.metadata.uid, 'the Machine controls its PodMachine');
      assert.equal(machine.status?.infrastructureRef?.kind, 'PodMachine');
      await tools.kubectlOk(['delete', `machine/${SAMPLE_MACHINE}`, '-n', WORKLOAD_NS, '--wait=false']);
      const backup = await waitFor(
        `a VolumeBackup of ${SAMPLE_MACHINE} to complete`,
        async () => {
          const backups = await tools.list<VolumeBackup>('volumebackups', WORKLOAD_NS);
          const mine = backups.find((b) => b.spec.machineUID === machine.metadata.uid);
          if (mine?.status?.phase === 'Failed')
            throw new Error(`the backup failed: ${JSON.stringify(mine.status)}`);
          return mine?.status?.phase === 'Completed' && mine;
        },
        { timeoutMs: 180_000 },
      );
      backupName = backup.metadata.name;
      await tools.kubectlOk([
        'wait',
        '--for=delete',
        `machine/${SAMPLE_MACHINE}`,
        '-n',
        WORKLOAD_NS,
        '--timeout=60s',
      ]);
      // The VolumeBackup outlives the Machine, with one backup claim per volume.
      await tools.kubectlOk(['get', `volumebackup/${backupName}`, '-n', WORKLOAD_NS]);
      const claims = (backup.status?.volumes ?? []).map((v) => v.backupClaimName);
      assert.equal(claims.length, machine.spec.volumes?.length ?? 0, 'one backup claim per volume');
      for (const claim of claims) {
        await tools.getJson<V1PersistentVolumeClaim>([`persistentvolumeclaim/${claim}`, '-n', WORKLOAD_NS]);
      }
      // The Machine went only after its PodMachine, whose claims the garbage collector takes.
      const left = await tools.kubectl(['get', `podmachine/${SAMPLE_MACHINE}`, '-n', WORKLOAD_NS]);
      assert.notEqual(left.code, 0, 'the PodMachine is gone');
      await waitFor(
        `the claims of ${SAMPLE_MACHINE} to be collected`,
        async () =>
          (await tools.list<V1PersistentVolumeClaim>('persistentvolumeclaims', WORKLOAD_NS)).every(
            (c) => !c.metadata?.name?.startsWith(`${SAMPLE_MACHINE}-`) || claims.includes(c.metadata.name),
          ),
        { timeoutMs: 60_000 },
      );
    },
  );

  scenario('the operator never got a 403 (no "forbidden" in its logs)', 120_000, async () => {
    const lines = await operator.stop();
    assert.ok(lines.some(isJsonLogLine), `no JSON log lines were captured:\n${lines.slice(0, 5).join('\n')}`);
    assert.deepEqual(rbacDenials(lines), [], 'RBAC denials in the operator logs');
    if (operator instanceof LocalOperator) {
      // One process for the install and one for the upgrade, each stopped with SIGTERM.
      assert.equal(operator.exits.length, 2, 'the install and the upgrade each ran one operator process');
      assert.deepEqual(
        operator.exits.map((e) => e.code),
        operator.exits.map(() => 0),
        'the operator exits 0 on SIGTERM',
      );
    }
  });

  scenario('helm uninstall leaves the CRDs and the user resources', 180_000, async () => {
    const deploymentPods = await podsOf(SAMPLE_DEPLOYMENT);
    await release.uninstall();
    installed = false;
    assert.equal(await release.isInstalled(), false);
    const managerRole = await tools.kubectl([
      'get',
      'clusterrole',
      `${operatorDeployment(manifests).metadata.name}-manager`,
    ]);
    assert.notEqual(managerRole.code, 0, "the release's ClusterRole is removed");
    for (const crd of crdNames()) await tools.kubectlOk(['get', 'crd', crd]);
    const kept = [
      `basicdeployment.apps.basicoperator.dev/${SAMPLE_DEPLOYMENT}`,
      'basicreplicaset.apps.basicoperator.dev/basicreplicaset-sample',
      ...(backupName ? [`volumebackup.infra.basicoperator.dev/${backupName}`] : []),
    ];
    const present = (
      await tools.kubectlOk([
        'get',
        'basicdeployments,basicreplicasets,volumebackups',
        '-n',
        WORKLOAD_NS,
        '-o',
        'name',
      ])
    ).split('\n');
    for (const object of kept) assert.ok(present.includes(object), `${object} is still there`);
    const podsAfter = await podsOf(SAMPLE_DEPLOYMENT);
    assert.deepEqual(uids(podsAfter), uids(deploymentPods), "the BasicDeployment's pods are untouched");
  });

  // ---------------------------------------------------------------------------------------------

  async function setsOf(deployment: string): Promise<BasicReplicaSet[]> {
    const bd = await tools.getJson<BasicDeployment>([`basicdeployment/${deployment}`, '-n', WORKLOAD_NS]);
    const sets = await tools.list<BasicReplicaSet>('basicreplicasets', WORKLOAD_NS);
    return sets.filter((s) => s.metadata.ownerReferences?.some((o) => o.uid === bd.metadata.uid));
  }

  /** Pods of the sample deployment that count (not terminating). */
  async function podsOf(deployment: string): Promise<V1Pod[]> {
    const pods = await tools.list<V1Pod>('pods', WORKLOAD_NS, `app=${deployment}`);
    return pods.filter((p) => !p.metadata?.deletionTimestamp);
  }

  /** Waits until the sample deployment is Ready at its current generation with `replicas` pods (of `image`). */
  async function waitForRollout(replicas: number, image?: string): Promise<void> {
    await waitFor(
      `${SAMPLE_DEPLOYMENT} to be Ready with ${replicas} replicas${image ? ` of ${image}` : ''}`,
      async () => {
        const bd = await tools.getJson<BasicDeployment>([
          `basicdeployment/${SAMPLE_DEPLOYMENT}`,
          '-n',
          WORKLOAD_NS,
        ]);
        const generation = bd.metadata.generation;
        const ready = bd.status?.conditions?.find((c) => c.type === 'Ready');
        const s = bd.status;
        if (
          !s ||
          s.observedGeneration !== generation ||
          ready?.status !== 'True' ||
          ready.observedGeneration !== generation ||
          s.replicas !== replicas ||
          s.updatedReplicas !== replicas ||
          s.readyReplicas !== replicas ||
          s.availableReplicas !== replicas
        ) {
          return false;
        }
        const pods = await podsOf(SAMPLE_DEPLOYMENT);
        return (
          pods.length === replicas && (!image || pods.every((p) => p.spec?.containers[0]?.image === image))
        );
      },
      { timeoutMs: 150_000 },
    );
  }

  /** kind/name -> uid of everything (not being deleted) the operator made or was given in the workload namespace. */
  async function uidsInWorkloadNamespace(): Promise<Record<string, string>> {
    const list = await tools.getJson<{ items: Manifest[] }>([
      'basicdeployments,basicreplicasets,machines,podmachines,pods,persistentvolumeclaims',
      '-n',
      WORKLOAD_NS,
    ]);
    return Object.fromEntries(
      list.items
        .filter((o) => !o.metadata.deletionTimestamp)
        .map((o) => [`${o.kind}/${o.metadata.name}`, o.metadata.uid ?? '']),
    );
  }

  /**
   * Waits until the operator holding the lease has reconciled every object in the workload namespace
   * and has nothing queued or running: each controller took in at least as many keys as there are
   * objects of its kind (a new process adds every object its cache lists).
   */
  async function waitForOperatorAtRest(): Promise<void> {
    const objects = new Map<string, number>();
    for (const [resource, controllers] of Object.entries(CONTROLLERS_OF)) {
      const count = (await tools.list<Manifest>(resource, WORKLOAD_NS)).length;
      for (const controller of controllers) objects.set(controller, count);
    }
    await waitFor(
      'the operator holding the lease to reconcile every object and come to rest',
      async () => {
        const leading = (await operator.metrics())
          .map(parseMetrics)
          .filter((samples) =>
            find(samples, 'leader_election_master_status', { name: LEASE }).some((s) => s.value === 1),
          );
        if (leading.length !== 1) throw new Error(`${leading.length} operator instances lead`);
        const behind = [...objects]
          .map(([controller, count]) => ({
            controller,
            objects: count,
            ...queueReading(leading[0]!, controller),
          }))
          .filter((r) => r.adds < r.objects || r.depth > 0 || r.active > 0);
        if (behind.length > 0) throw new Error(`not at rest: ${JSON.stringify(behind)}`);
        return true;
      },
      { timeoutMs: 90_000 },
    );
  }

  async function leaseHolder(): Promise<string> {
    const lease = await tools.kubectl([
      'get',
      'lease',
      LEASE,
      '-n',
      RELEASE_NS,
      '-o',
      'jsonpath={.spec.holderIdentity}',
    ]);
    return lease.code === 0 ? lease.stdout.trim() : '';
  }
});

/** Runs a step and notes how long it took (on stderr, for slow runs). */
async function timed<T>(what: string, step: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const result = await step();
  process.stderr.write(`[e2e] ${what} in ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
  return result;
}

function uids(objects: { metadata?: { uid?: string } }[]): string[] {
  return objects.map((o) => o.metadata?.uid ?? '').sort();
}

function isJsonLogLine(line: string): boolean {
  try {
    const parsed: unknown = JSON.parse(line);
    return typeof parsed === 'object' && parsed !== null && 'level' in parsed && 'message' in parsed;
  } catch {
    return false;
  }
}

/** The sample manifests (one object each). */
function sampleCount(): number {
  return readdirSync(SAMPLES_DIR).filter((f) => f.endsWith('.yaml')).length;
}

function crdNames(): string[] {
  return readdirSync(CRD_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => (load(readFileSync(join(CRD_DIR, f), 'utf8')) as Manifest).metadata.name);
}
