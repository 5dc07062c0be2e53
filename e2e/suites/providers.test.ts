import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { CoreV1Event, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { STATEFULSET_MACHINE, type StatefulSetMachine } from '../../examples/statefulset-provider/src/api.ts';
import { RESTORED_FROM_ANNOTATION as STATEFULSET_RESTORED_FROM } from '../../examples/statefulset-provider/src/names.ts';
import {
  ADOPTABLE_BY_ANNOTATION,
  MACHINE,
  type Machine,
  type MachineVolume,
  POD_MACHINE,
  type PodMachine,
  type VolumeBackup,
} from '../../src/apis/index.ts';
import { RESTORED_FROM_ANNOTATION as POD_MACHINE_RESTORED_FROM } from '../../src/controllers/podmachine/names.ts';
import { runOk } from '../providers/exec.ts';
import { LocalProvider } from '../providers/local/index.ts';
import type { ClusterInfo } from '../providers/provider.ts';
import type { OperatorProcess } from '../support/operator-process.ts';
import { e2eCluster } from './support/cluster.ts';
import { GiveUp, waitUntil } from './support/kind.ts';
import { ClusterTools } from './support/kube.ts';
import { rbacDenials } from './support/logs.ts';
import { InClusterOperator, type OperatorUnderTest, operatorFor } from './support/operator.ts';
import {
  HelmRelease,
  installCrds,
  type Manifest,
  operatorDeployment,
  tearDownRelease,
  type Values,
} from './support/release.ts';
import { applyStatefulSetProvider, startStatefulSetProvider } from './support/statefulset-provider.ts';

/**
 * Machines on both providers of the infrastructure contract, end to end, with the operator as users
 * get it (helm install of charts/basic-operator, its RBAC and nothing more) and the StatefulSetMachine
 * example provider as its own process on this host (its CRD and rbac/ applied, authenticated as its
 * ServiceAccount): an inline Machine (a PodMachine) and a Machine referencing a StatefulSetMachine
 * become Ready, are deleted with a backup, and each backup is restored into a Machine of the other
 * provider. On kind the bytes written before the deletion are read back from the restored volumes.
 * The scenarios run in order and build on each other (see docs/e2e.md).
 */

const id = randomBytes(3).toString('hex');
const RELEASE = `bo-prov-${id}`;
const RELEASE_NS = RELEASE;
const WORKLOAD_NS = `${RELEASE}-workload`;
const LEASE = `${RELEASE}.basicoperator.dev`;
const ON_KIND = process.env.E2E_PROVIDER === 'kind';
/** Why the byte checks skip themselves, or false where containers run. */
const BYTES_SKIP: false | string = ON_KIND
  ? false
  : `the local provider (kwok) runs no container, so nothing can write or read a volume: the bytes are checked on kind only (E2E_PROVIDER=kind); E2E_PROVIDER is ${process.env.E2E_PROVIDER ?? 'unset'}`;

/** The Machines, by the provider that realizes them and where their volumes come from. */
const KUBECTL_BASIC = fileURLToPath(new URL('../../bin/kubectl-basic.js', import.meta.url));

interface PluginTreeNode {
  kind: string;
  name: string;
  children: PluginTreeNode[];
}

const POD_FIRST = 'pod-first'; // inline: a PodMachine
const STS_FIRST = 'sts-first'; // spec.infrastructureRef to the StatefulSetMachine sts-first
const STS_FROM_POD = 'sts-from-pod'; // a StatefulSetMachine restoring pod-first's backup
const POD_FROM_STS = 'pod-from-sts'; // inline, restoring sts-first's backup
const VOLUME_NAMES = ['data', 'logs'] as const;
const MOUNTS: Record<(typeof VOLUME_NAMES)[number], string> = { data: '/data', logs: '/var/log/app' };
/** The shell traps SIGTERM, so its pod stops at once on a stop request (PID 1 ignores it otherwise). */
const SLEEP = ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"];
const TOKEN_FILE = 'token';

const READY_TIMEOUT_MS = 180_000;
const BACKUP_TIMEOUT_MS = 180_000;
const GONE_TIMEOUT_MS = 120_000;

describe(`Machines on both providers, end to end (${process.env.E2E_PROVIDER ?? 'local'} provider)`, () => {
  let cluster: ClusterInfo;
  let tools: ClusterTools;
  let release: HelmRelease;
  let operator: OperatorUnderTest;
  let provider: OperatorProcess | undefined;
  let manifests: Manifest[] = [];
  let workdir: string;
  let installed = false;
  let failures = 0;
  /** The VolumeBackup of each first Machine, once scenario 3 saw it complete. */
  const backups = new Map<string, VolumeBackup>();
  /** Per first Machine, per volume: the token written into it (kind only). */
  const tokens = new Map<string, Record<string, string>>();

  const image = () => cluster.images?.workload ?? 'busybox:1.36';

  /** One scenario: skipped without an install; a failure carries both processes' last log lines. */
  function scenario(
    name: string,
    timeoutMs: number,
    body: (t: TestContext) => Promise<void>,
    options: { needsInstall?: boolean; skip?: false | string } = {},
  ): void {
    it(name, { timeout: timeoutMs, skip: options.skip ?? false }, async (t) => {
      if ((options.needsInstall ?? true) && !installed) {
        t.skip('the operator and the StatefulSetMachine provider were not installed');
        return;
      }
      try {
        await body(t);
      } catch (err) {
        failures += 1;
        if (err instanceof Error) err.message += `\n${processLogs()}`;
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
    note(
      `release ${RELEASE}, workload namespace ${WORKLOAD_NS}, operator: ${operator.where}, files: ${workdir}`,
    );
  });

  after(async () => {
    await provider?.stop({ graceMs: 15_000 }).catch(() => undefined);
    const operatorLines = (await operator?.stop().catch(() => undefined)) ?? [];
    // The local process already writes its log there; the in-cluster one's lines are kept now.
    if (failures > 0 && operator instanceof InClusterOperator) {
      writeFileSync(join(workdir, 'operator.log'), `${operatorLines.join('\n')}\n`);
    }
    if (tools) await tearDownRelease(tools, release, WORKLOAD_NS);
    if (workdir && failures === 0) rmSync(workdir, { recursive: true, force: true });
    else if (workdir) note(`failed: logs of the operator and the provider kept in ${workdir}`);
  });

  // ---------------------------------------------------------------------------------------------

  scenario(
    'installs the chart and starts the StatefulSetMachine provider as its own process',
    300_000,
    async () => {
      await installCrds(tools);
      // The provider's RBAC first: its ClusterRole labelled aggregate-to-manager is what lets the
      // operator read, own and delete StatefulSetMachines.
      await applyStatefulSetProvider(tools);
      for (const namespace of [RELEASE_NS, WORKLOAD_NS]) {
        await tools.kubectlOk(['create', 'namespace', namespace]);
        await tools.kubectlOk(['label', 'namespace', namespace, 'basicoperator.dev/test=true']);
      }
      const values: Values = {
        ...operator.values,
        watchNamespaces: [WORKLOAD_NS],
        leaderElection: { id: LEASE },
      };
      manifests = await release.template(values);
      await release.install(values);
      installed = true;
      await operator.start(operatorDeployment(manifests));
      await waitUntil('the operator to answer /readyz with 200', async () => (await operator.readyz()).ok, {
        timeoutMs: 90_000,
        diagnose,
      });
      // The control plane aggregates the provider's rules into the chart's manager ClusterRole.
      const sa = serviceAccount();
      for (const verb of ['get', 'list', 'watch', 'patch', 'delete']) {
        await waitUntil(
          `the operator's ServiceAccount to be allowed to ${verb} statefulsetmachines (aggregated from the provider's ClusterRole)`,
          async () => {
            const answer = await tools.kubectl([
              'auth',
              'can-i',
              verb,
              `${STATEFULSET_MACHINE.plural}.${STATEFULSET_MACHINE.group}`,
              `--as=system:serviceaccount:${sa.namespace}:${sa.name}`,
              '-n',
              WORKLOAD_NS,
            ]);
            return answer.stdout.trim() === 'yes';
          },
          { timeoutMs: 30_000, diagnose },
        );
      }
      provider = await startStatefulSetProvider(tools, {
        namespace: WORKLOAD_NS,
        workdir,
        // The operator's image holds the mover the restore Jobs run (kind); kwok runs nothing.
        restoreJobImage: cluster.images?.operator,
      });
    },
    { needsInstall: false },
  );

  scenario(
    '1. an inline Machine with two volumes becomes Ready as a PodMachine; kubectl shows its provider',
    READY_TIMEOUT_MS + 60_000,
    async () => {
      if (cluster.provider === 'local') await new LocalProvider(cluster.name).ensureVolumes(20);
      await apply(inlineMachine(POD_FIRST, volumes()));
      const machine = await waitForMachineReady(POD_FIRST);
      assert.deepEqual(machine.status?.infrastructureRef, {
        apiVersion: POD_MACHINE.apiVersion,
        kind: POD_MACHINE.kind,
        name: POD_FIRST,
      });
      const podMachine = await get<PodMachine>(`${POD_MACHINE.plural}/${POD_FIRST}`);
      assert.equal(controllerUid(podMachine), machine.metadata.uid, 'the Machine controls its PodMachine');
      assert.equal(machine.status?.providerID, `pod://${WORKLOAD_NS}/${POD_FIRST}`);
      assert.deepEqual(
        machine.status?.volumes?.map((v) => [v.name, v.claimName, v.phase]),
        VOLUME_NAMES.map((v) => [v, `${POD_FIRST}-${v}`, 'Bound']),
      );
      assert.deepEqual(await printerColumns(POD_FIRST), {
        NAME: POD_FIRST,
        PHASE: 'Running',
        PROVIDER: 'PodMachine',
        INFRASTRUCTURE: 'True',
        READY: 'true',
      });
    },
  );

  scenario(
    '2. a Machine referencing a StatefulSetMachine becomes Ready with its providerID, addresses and volumes',
    READY_TIMEOUT_MS + 60_000,
    async () => {
      await apply(statefulSetMachine(STS_FIRST, volumes()), referencingMachine(STS_FIRST));
      const machine = await waitForMachineReady(STS_FIRST);
      const sts = await get<StatefulSetMachine>(`${STATEFULSET_MACHINE.plural}/${STS_FIRST}`);
      assert.equal(controllerUid(sts), machine.metadata.uid, 'the Machine owns the StatefulSetMachine');
      assert.deepEqual(machine.status?.infrastructureRef, {
        apiVersion: STATEFULSET_MACHINE.apiVersion,
        kind: STATEFULSET_MACHINE.kind,
        name: STS_FIRST,
      });
      // The copies follow the provider's status; wait until a copy of its latest one is there.
      const copied = await waitUntil(
        `machine/${STS_FIRST} to carry the StatefulSetMachine's providerID, addresses and volumes`,
        async () => {
          const [m, s] = await Promise.all([
            get<Machine>(`machine/${STS_FIRST}`),
            get<StatefulSetMachine>(`${STATEFULSET_MACHINE.plural}/${STS_FIRST}`),
          ]);
          const same =
            m.status?.providerID === s.status?.providerID &&
            sameJson(m.status?.addresses ?? [], s.status?.addresses ?? []) &&
            sameJson(m.status?.volumes, s.status?.volumes);
          return same && { machine: m, provider: s };
        },
        { timeoutMs: 30_000, diagnose: () => diagnose([`machine/${STS_FIRST}`]) },
      );
      assert.equal(copied.machine.status?.providerID, `statefulset://${WORKLOAD_NS}/${STS_FIRST}`);
      assert.deepEqual(
        copied.machine.status?.volumes?.map((v) => [v.name, v.claimName, v.phase]),
        VOLUME_NAMES.map((v) => [v, `${v}-${STS_FIRST}-0`, 'Bound']),
      );
      note(`${STS_FIRST}: addresses ${JSON.stringify(copied.machine.status?.addresses ?? [])}`);
      await get(`statefulset/${STS_FIRST}`);
      // `kubectl basic tree` reaches the provider's StatefulSet and its pod by their ownerReferences.
      const tree = JSON.parse(
        await runOk(
          process.execPath,
          [KUBECTL_BASIC, 'tree', `machine/${STS_FIRST}`, '-n', WORKLOAD_NS, '-o', 'json'],
          {
            env: { KUBECONFIG: cluster.kubeconfig },
            timeoutMs: 30_000,
          },
        ),
      ) as { items: PluginTreeNode[] };
      const names = (n: PluginTreeNode): string[] => [`${n.kind}/${n.name}`, ...n.children.flatMap(names)];
      assert.deepEqual(names(tree.items[0] as PluginTreeNode), [
        `Machine/${STS_FIRST}`,
        `StatefulSetMachine/${STS_FIRST}`,
        ...VOLUME_NAMES.map((v) => `PersistentVolumeClaim/${v}-${STS_FIRST}-0`),
        `StatefulSet/${STS_FIRST}`,
        `Pod/${STS_FIRST}-0`,
      ]);
      assert.deepEqual(await printerColumns(STS_FIRST), {
        NAME: STS_FIRST,
        PHASE: 'Running',
        PROVIDER: 'StatefulSetMachine',
        INFRASTRUCTURE: 'True',
        READY: 'true',
      });
    },
  );

  scenario(
    'kind: a token is written into each volume of both Machines',
    120_000,
    async () => {
      for (const [machine, pod] of [
        [POD_FIRST, POD_FIRST],
        [STS_FIRST, `${STS_FIRST}-0`],
      ] as const) {
        const written: Record<string, string> = {};
        for (const volume of VOLUME_NAMES) {
          const token = randomBytes(16).toString('hex');
          await tools.kubectlOk(exec(pod, `printf '%s' ${token} > ${MOUNTS[volume]}/${TOKEN_FILE} && sync`));
          assert.equal(await tools.kubectlOk(exec(pod, `cat ${MOUNTS[volume]}/${TOKEN_FILE}`)), token);
          written[volume] = token;
        }
        tokens.set(machine, written);
        note(`${machine} (pod ${pod}) wrote ${JSON.stringify(written)}`);
      }
    },
    { skip: BYTES_SKIP },
  );

  scenario(
    '3. deleting both Machines (backup OnDelete) backs each up, then lets the Machine, its provider object and its compute go',
    BACKUP_TIMEOUT_MS + 2 * GONE_TIMEOUT_MS,
    async () => {
      const machines = await Promise.all(
        [POD_FIRST, STS_FIRST].map((name) => get<Machine>(`machine/${name}`)),
      );
      await tools.kubectlOk([
        'delete',
        `machine/${POD_FIRST}`,
        `machine/${STS_FIRST}`,
        '-n',
        WORKLOAD_NS,
        '--wait=false',
      ]);
      for (const machine of machines) {
        const name = machine.metadata.name ?? '';
        const backup = await waitUntil(
          `a VolumeBackup of machine/${name} to complete`,
          async () => {
            const mine = (await list<VolumeBackup>('volumebackups')).find(
              (b) => b.spec.machineUID === machine.metadata.uid,
            );
            if (mine?.status?.phase === 'Failed')
              throw new GiveUp(`the backup failed: ${JSON.stringify(mine.status)}`);
            return mine?.status?.phase === 'Completed' && mine;
          },
          { timeoutMs: BACKUP_TIMEOUT_MS, diagnose: () => diagnose([`machine/${name}`, 'volumebackups']) },
        );
        backups.set(name, backup);
        assert.deepEqual(
          backup.spec.volumes.map((v) => [v.name, v.claimName]),
          (machine.status?.volumes ?? []).map((v) => [v.name, v.claimName]),
          `the backup of ${name} copies the volumes in its status`,
        );
      }
      const gone = [
        `machine/${POD_FIRST}`,
        `machine/${STS_FIRST}`,
        `${POD_MACHINE.plural}/${POD_FIRST}`,
        `pod/${POD_FIRST}`,
        `${STATEFULSET_MACHINE.plural}/${STS_FIRST}`,
        `statefulset/${STS_FIRST}`,
        `pod/${STS_FIRST}-0`,
      ];
      await waitForGone('the Machines, their provider objects and their pods and StatefulSet', gone);
      const claims = machines.flatMap((m) => (m.status?.volumes ?? []).map((v) => `pvc/${v.claimName}`));
      await waitForGone("the first Machines' own claims (their data lives on in the backups)", claims);
      // The VolumeBackups outlive the Machines, each with one backup claim per volume.
      for (const [name, backup] of backups) {
        const live = await get<VolumeBackup>(`volumebackup/${backup.metadata.name}`);
        assert.equal(live.status?.phase, 'Completed');
        assert.deepEqual(
          (live.status?.volumes ?? []).map((v) => v.name).sort(),
          [...VOLUME_NAMES],
          `the backup of ${name} holds both volumes`,
        );
        for (const v of live.status?.volumes ?? []) {
          const claim = await get<V1PersistentVolumeClaim>(`pvc/${v.backupClaimName}`);
          assert.equal(claim.metadata?.deletionTimestamp, undefined, `${v.backupClaimName} is kept`);
        }
      }
    },
  );

  scenario(
    '4. each backup restores into a Machine of the other provider, which becomes Ready with its claims marked restored',
    READY_TIMEOUT_MS + 60_000,
    async (t) => {
      const podBackup = backups.get(POD_FIRST)?.metadata.name;
      const stsBackup = backups.get(STS_FIRST)?.metadata.name;
      if (!podBackup || !stsBackup) {
        t.skip('scenario 3 left no completed VolumeBackups');
        return;
      }
      if (cluster.provider === 'local') await new LocalProvider(cluster.name).ensureVolumes(20);
      await apply(
        statefulSetMachine(STS_FROM_POD, volumes(podBackup)),
        referencingMachine(STS_FROM_POD),
        inlineMachine(POD_FROM_STS, volumes(stsBackup)),
      );
      const [stsMachine, podMachine] = await Promise.all([
        waitForMachineReady(STS_FROM_POD),
        waitForMachineReady(POD_FROM_STS),
      ]);
      const restored: [Machine, string, string, (volume: string) => string][] = [
        [stsMachine, STATEFULSET_RESTORED_FROM, podBackup, (v) => `${v}-${STS_FROM_POD}-0`],
        [podMachine, POD_MACHINE_RESTORED_FROM, stsBackup, (v) => `${POD_FROM_STS}-${v}`],
      ];
      for (const [machine, annotation, backup, claimOf] of restored) {
        assert.deepEqual(
          machine.status?.volumes?.map((v) => v.claimName),
          VOLUME_NAMES.map(claimOf),
          `${machine.metadata.name} lists its claims`,
        );
        for (const volume of VOLUME_NAMES) {
          const claim = await get<V1PersistentVolumeClaim>(`pvc/${claimOf(volume)}`);
          assert.equal(
            claim.metadata?.annotations?.[annotation],
            `${backup}/${volume}`,
            `claim ${claimOf(volume)} records that it holds volume ${volume} of ${backup}`,
          );
        }
      }
      assert.equal((await printerColumns(STS_FROM_POD)).PROVIDER, 'StatefulSetMachine');
      assert.equal((await printerColumns(POD_FROM_STS)).PROVIDER, 'PodMachine');
    },
  );

  scenario(
    'kind: the restored volumes hold the tokens written before the deletion',
    120_000,
    async (t) => {
      const fromPod = tokens.get(POD_FIRST);
      const fromSts = tokens.get(STS_FIRST);
      if (!fromPod || !fromSts) {
        t.skip('no tokens were written');
        return;
      }
      for (const [pod, written] of [
        [`${STS_FROM_POD}-0`, fromPod],
        [POD_FROM_STS, fromSts],
      ] as const) {
        for (const volume of VOLUME_NAMES) {
          const read = await tools.kubectlOk(exec(pod, `cat ${MOUNTS[volume]}/${TOKEN_FILE}`));
          assert.equal(read, written[volume], `pod ${pod} reads back volume ${volume}`);
        }
      }
    },
    { skip: BYTES_SKIP },
  );

  scenario(
    '5. clean-up leaves nothing behind: Machines, provider objects and VolumeBackups deleted, processes stopped, namespaces gone',
    BACKUP_TIMEOUT_MS + 4 * GONE_TIMEOUT_MS,
    async () => {
      // Whatever Machines are left (the restored ones, or the first ones of a failed run) go the
      // way users delete them: backed up first.
      await tools.kubectlOk(['delete', 'machines', '--all', '-n', WORKLOAD_NS, '--wait=false']);
      await waitUntil(
        'every Machine to be backed up and gone',
        async () => {
          const failed = (await list<VolumeBackup>('volumebackups')).filter(
            (b) => b.status?.phase === 'Failed',
          );
          if (failed.length > 0)
            throw new GiveUp(`backups failed: ${failed.map((b) => b.metadata.name).join(', ')}`);
          return (await list<Machine>('machines')).length === 0;
        },
        { timeoutMs: BACKUP_TIMEOUT_MS, diagnose: () => diagnose(['machines', 'volumebackups']) },
      );
      await tools.kubectlOk(['delete', 'volumebackups', '--all', '-n', WORKLOAD_NS, '--wait=false']);
      const kinds = [
        MACHINE.plural,
        POD_MACHINE.plural,
        `${STATEFULSET_MACHINE.plural}.${STATEFULSET_MACHINE.group}`,
        'volumebackups',
        'statefulsets',
        'pods',
        'jobs',
        'persistentvolumeclaims',
      ];
      await waitUntil(
        `nothing left in ${WORKLOAD_NS} (${kinds.join(', ')})`,
        async () => (await leftIn(WORKLOAD_NS, kinds)).length === 0,
        {
          timeoutMs: GONE_TIMEOUT_MS,
          diagnose: async () => `left: ${(await leftIn(WORKLOAD_NS, kinds)).join(', ')}\n${await diagnose()}`,
        },
      );

      // Both processes stop gracefully, and neither was ever denied an API call.
      const exit = await provider?.stop({ graceMs: 15_000 });
      assert.deepEqual(exit, { code: 0, signal: null }, 'the provider exits 0 on SIGTERM');
      assert.deepEqual(rbacDenials(provider?.lines ?? []), [], 'RBAC denials in the provider logs');
      const operatorLines = await operator.stop();
      assert.deepEqual(rbacDenials(operatorLines), [], 'RBAC denials in the operator logs');

      await release.uninstall();
      installed = false;
      // The provider's ClusterRole is aggregated into the release's manager role: the uninstall
      // must not leave that role behind (docs/install.md, RBAC).
      const roles = await tools.kubectlOk(['get', 'clusterroles', '-o', 'name']);
      assert.deepEqual(
        roles.split('\n').filter((r) => r.startsWith(`clusterrole.rbac.authorization.k8s.io/${RELEASE}-`)),
        [],
        'ClusterRoles of the release left after helm uninstall',
      );
      await tools.kubectlOk(['delete', 'namespace', WORKLOAD_NS, RELEASE_NS, '--wait=false']);
      await waitUntil(
        `namespaces ${WORKLOAD_NS} and ${RELEASE_NS} to be gone`,
        async () => {
          const result = await tools.kubectlOk([
            'get',
            'namespace',
            WORKLOAD_NS,
            RELEASE_NS,
            '--ignore-not-found',
            '-o',
            'name',
          ]);
          return result.trim() === '';
        },
        { timeoutMs: GONE_TIMEOUT_MS, diagnose: () => diagnose([], RELEASE_NS) },
      );
    },
  );

  // ---------------------------------------------------------------------------------------------

  function serviceAccount(): { name: string; namespace: string } {
    return {
      name: operatorDeployment(manifests).spec?.template.spec?.serviceAccountName ?? '',
      namespace: RELEASE_NS,
    };
  }

  function volumes(restoreFrom?: string): MachineVolume[] {
    return VOLUME_NAMES.map((name) => ({
      name,
      size: '64Mi',
      mountPath: MOUNTS[name],
      ...(restoreFrom ? { restoreFrom: { volumeBackup: restoreFrom, volume: name } } : {}),
    }));
  }

  function inlineMachine(name: string, machineVolumes: MachineVolume[]): Machine {
    return {
      apiVersion: MACHINE.apiVersion,
      kind: MACHINE.kind,
      metadata: { name, namespace: WORKLOAD_NS },
      spec: { image: image(), command: SLEEP, volumes: machineVolumes, backup: { policy: 'OnDelete' } },
    };
  }

  function statefulSetMachine(name: string, machineVolumes: MachineVolume[]): StatefulSetMachine {
    return {
      apiVersion: STATEFULSET_MACHINE.apiVersion,
      kind: STATEFULSET_MACHINE.kind,
      // The Machine of its name may adopt it (referencingMachine).
      metadata: { name, namespace: WORKLOAD_NS, annotations: { [ADOPTABLE_BY_ANNOTATION]: name } },
      spec: { image: image(), command: SLEEP, volumes: machineVolumes },
    };
  }

  /** A Machine of `name` realized by the StatefulSetMachine of the same name. */
  function referencingMachine(name: string): Machine {
    return {
      apiVersion: MACHINE.apiVersion,
      kind: MACHINE.kind,
      metadata: { name, namespace: WORKLOAD_NS },
      spec: {
        infrastructureRef: {
          apiVersion: STATEFULSET_MACHINE.apiVersion,
          kind: STATEFULSET_MACHINE.kind,
          name,
        },
        backup: { policy: 'OnDelete' },
      },
    };
  }

  async function apply(...objects: object[]): Promise<void> {
    await tools.kubectlOk(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
    );
  }

  function get<T>(ref: string): Promise<T> {
    return tools.getJson<T>([ref, '-n', WORKLOAD_NS]);
  }

  function list<T>(type: string): Promise<T[]> {
    return tools.list<T>(type, WORKLOAD_NS);
  }

  /** `kubectl exec` of a shell command in the `machine` container of `pod`. */
  function exec(pod: string, script: string): string[] {
    return ['exec', pod, '-n', WORKLOAD_NS, '-c', 'machine', '--', 'sh', '-c', script];
  }

  /** Ready at its generation, phase Running; gives up at once on Failed. */
  function waitForMachineReady(name: string): Promise<Machine> {
    return waitUntil(
      `machine/${name} to be Running and Ready`,
      async () => {
        const m = await get<Machine>(`machine/${name}`);
        if (m.status?.phase === 'Failed')
          throw new GiveUp(`machine/${name} failed: ${JSON.stringify(m.status)}`);
        const ready = m.status?.conditions?.find((c) => c.type === 'Ready');
        return (
          m.status?.phase === 'Running' &&
          m.status.ready === true &&
          ready?.status === 'True' &&
          ready.observedGeneration === m.metadata.generation &&
          m
        );
      },
      { timeoutMs: READY_TIMEOUT_MS, diagnose: () => diagnose([`machine/${name}`]) },
    );
  }

  /** Waits until none of `refs` exists any more. */
  function waitForGone(what: string, refs: string[]): Promise<true> {
    return waitUntil(
      `${what} to be gone: ${refs.join(', ')}`,
      async () => (await existing(refs)).length === 0,
      {
        timeoutMs: GONE_TIMEOUT_MS,
        diagnose: async () => `still there: ${(await existing(refs)).join(', ')}\n${await diagnose(refs)}`,
      },
    );
  }

  async function existing(refs: string[]): Promise<string[]> {
    const out = await tools.kubectlOk([
      'get',
      ...refs,
      '-n',
      WORKLOAD_NS,
      '--ignore-not-found',
      '-o',
      'name',
    ]);
    return out.split('\n').filter(Boolean);
  }

  async function leftIn(namespace: string, kinds: string[]): Promise<string[]> {
    const out = await tools.kubectlOk(['get', kinds.join(','), '-n', namespace, '-o', 'name']);
    return out.split('\n').filter(Boolean);
  }

  /** The Machine's row of `kubectl get machine` (the CRD's printer columns), by column, without AGE. */
  async function printerColumns(name: string): Promise<Record<string, string>> {
    const table = await tools.kubectlOk(['get', `machine/${name}`, '-n', WORKLOAD_NS]);
    const [header = '', row = ''] = table.trim().split('\n');
    const names = header.trim().split(/\s+/);
    const cells = row.trim().split(/\s+/);
    assert.equal(cells.length, names.length, `one cell per column:\n${table}`);
    return Object.fromEntries(names.map((n, i) => [n, cells[i] ?? '']).filter(([n]) => n !== 'AGE'));
  }

  /**
   * For a failed wait: the status of `refs`, the pods, StatefulSets, Jobs and claims and the last
   * Events of the namespace (the scenario adds the processes' logs).
   */
  async function diagnose(refs: string[] = [], namespace = WORKLOAD_NS): Promise<string> {
    const parts: string[] = [];
    for (const ref of refs) {
      const result = await tools.kubectl(['get', ref, '-n', namespace, '-o', 'json']);
      if (result.code !== 0) {
        parts.push(`--- ${ref}: ${result.stderr.trim()}`);
        continue;
      }
      const object = JSON.parse(result.stdout) as { status?: unknown; items?: { status?: unknown }[] };
      const status = object.items ? object.items.map((i) => i.status) : object.status;
      parts.push(`--- ${ref} status:\n${JSON.stringify(status ?? {}, null, 2)}`);
    }
    const objects = await tools.kubectl([
      'get',
      'machines,podmachines,statefulsetmachines,statefulsets,pods,jobs,pvc',
      '-n',
      namespace,
      '-o',
      'wide',
    ]);
    parts.push(`--- objects in ${namespace}:\n${(objects.stdout || objects.stderr).trim()}`);
    const events = await tools.list<CoreV1Event>('events', namespace).catch(() => []);
    const time = (e: CoreV1Event) =>
      String(e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? '');
    parts.push(
      `--- last events in ${namespace}:\n${events
        .sort((a, b) => time(a).localeCompare(time(b)))
        .slice(-25)
        .map(
          (e) =>
            `${e.type} ${e.reason} ${e.involvedObject.kind}/${e.involvedObject.name}: ${(e.message ?? '').trim()}`,
        )
        .join('\n')}`,
    );
    return parts.join('\n');
  }

  /** The state and last log lines of the operator and of the provider process. */
  function processLogs(): string {
    return `${operator?.describe() ?? '--- operator: not started'}\n${provider?.describe(15) ?? '--- statefulset-provider: not started'}`;
  }
});

function note(message: string): void {
  process.stderr.write(`[e2e providers] ${message}\n`);
}

function controllerUid(object: { metadata?: { ownerReferences?: { controller?: boolean; uid: string }[] } }) {
  return object.metadata?.ownerReferences?.find((o) => o.controller)?.uid;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
