// The ValidatingAdmissionPolicies of the chart and config/ (docs/install.md, "Admission policy"):
// both ship the same policies, and the real API server enforces them. A user allowed by RBAC to
// write Machines, VolumeBackups and claims in a namespace may not forge a Machine's backup nor
// delete a backup claim; the operator's ServiceAccount and Kubernetes' own controllers may. Only a
// user who may create pods (and so read claims) may have claims copied by a standalone VolumeBackup,
// and only one who may get a VolumeBackup may restore from it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type {
  V1CustomResourceDefinition,
  V1Deployment,
  V1PersistentVolumeClaim,
  V1SelfSubjectReview,
} from '@kubernetes/client-node';
import { runOk } from '../../../e2e/providers/exec.ts';
import { testClient, testCluster } from '../../../e2e/support/cluster.ts';
import { installCrds } from '../../../e2e/support/crds.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  MACHINE,
  type Machine,
  POD_MACHINE,
  type PodMachine,
  VOLUME_BACKUP,
  type VolumeBackup,
} from '../../../src/apis/index.ts';
import { ApiError, isNotFound } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../../../src/runtime/client/resource.ts';
import { grantRole, impersonatingClient, userSubject } from '../../support/impersonation.ts';
import { tempDir } from '../../support/temp-dir.ts';
import {
  CONFIG_DIR,
  DEFAULT_RELEASE,
  find,
  type Manifest,
  parseManifests,
  readManifests,
} from '../../unit/packaging/manifests.ts';
import {
  type BindingManifest,
  bindings,
  installPolicies,
  POLICIES,
  POLICY,
  type PolicyManifest,
  policies,
  policyDenial,
  renderPolicies,
  uninstallPolicies,
} from './admission.ts';
import { renderChart } from './helm.ts';

/** The operator's labels (src/controllers/volumebackup/names.ts). */
const MACHINE_LABEL = 'infra.basicoperator.dev/machine';
const MACHINE_UID_LABEL = 'infra.basicoperator.dev/machine-uid';
const VOLUME_BACKUP_LABEL = 'infra.basicoperator.dev/volume-backup';

describe('the chart and config/ ship the same admission policies', () => {
  let chart: Manifest[];
  before(async () => {
    chart = await renderChart();
  });

  for (const policy of POLICIES) {
    it(`ValidatingAdmissionPolicy basic-operator-${policy} is the same in both, and so is its binding`, () => {
      const name = `basic-operator-${policy}`;
      const config = [
        ...readManifests('admission', 'policy.yaml'),
        ...readManifests('admission', 'policy_binding.yaml'),
      ];
      assert.deepEqual(
        find<PolicyManifest>(chart, 'ValidatingAdmissionPolicy', name).spec,
        find<PolicyManifest>(config, 'ValidatingAdmissionPolicy', name).spec,
      );
      assert.deepEqual(
        find<BindingManifest>(chart, 'ValidatingAdmissionPolicyBinding', name).spec,
        find<BindingManifest>(config, 'ValidatingAdmissionPolicyBinding', name).spec,
      );
    });
  }

  it('binds every policy to the ServiceAccount the Deployment runs as, in every namespace by default', () => {
    const deployment = find<Manifest & V1Deployment>(chart, 'Deployment', 'basic-operator');
    assert.deepEqual(
      bindings(chart).map((b) => ({ name: b.metadata.name, spec: b.spec })),
      POLICIES.map((policy) => ({
        name: `basic-operator-${policy}`,
        spec: {
          policyName: `basic-operator-${policy}`,
          paramRef: {
            name: deployment.spec?.template.spec?.serviceAccountName,
            namespace: DEFAULT_RELEASE.namespace,
            parameterNotFoundAction: 'Allow',
          },
          validationActions: ['Deny'],
        },
      })),
    );
    assert.deepEqual(
      policies(chart).map((p) => p.spec?.paramKind),
      POLICIES.map(() => ({ apiVersion: 'v1', kind: 'ServiceAccount' })),
    );
  });

  it('with watchNamespaces, binds them in those namespaces only', async () => {
    const manifests = await renderChart({
      set: ['watchNamespaces={team-a,team-b}', 'serviceAccount.create=false', 'serviceAccount.name=ops'],
    });
    for (const binding of bindings(manifests)) {
      assert.equal(binding.spec?.paramRef?.name, 'ops');
      assert.deepEqual(binding.spec?.matchResources, {
        namespaceSelector: {
          matchExpressions: [
            { key: 'kubernetes.io/metadata.name', operator: 'In', values: ['team-a', 'team-b'] },
          ],
        },
      });
    }
    assert.equal(bindings(manifests).length, POLICIES.length);
  });

  it('admissionPolicy.enabled=false renders no policy and no binding', async () => {
    const manifests = await renderChart({ set: ['admissionPolicy.enabled=false'] });
    assert.deepEqual([...policies(manifests), ...bindings(manifests)], []);
  });

  it("config/: an overlay's namespace and name prefix move the bindings' references with the objects", async () => {
    const cluster = await testCluster();
    const dir = tempDir('basic-operator-admission-');
    const overlay = join(dir, 'overlay');
    mkdirSync(overlay);
    writeFileSync(
      join(overlay, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        'namespace: operators',
        'namePrefix: team-',
        'resources:',
        `  - ${relative(overlay, join(CONFIG_DIR, 'default'))}`,
        '',
      ].join('\n'),
    );
    const built = parseManifests(await runOk(cluster.kubectl, ['kustomize', overlay]));
    const serviceAccount = find(built, 'ServiceAccount', 'team-basic-operator');
    assert.equal(serviceAccount.metadata.namespace, 'operators');
    for (const policy of POLICIES) {
      const binding = find<BindingManifest>(
        built,
        'ValidatingAdmissionPolicyBinding',
        `team-basic-operator-${policy}`,
      );
      find(built, 'ValidatingAdmissionPolicy', `team-basic-operator-${policy}`);
      assert.equal(binding.spec?.policyName, `team-basic-operator-${policy}`);
      assert.deepEqual(binding.spec?.paramRef, {
        name: 'team-basic-operator',
        namespace: 'operators',
        parameterNotFoundAction: 'Allow',
      });
    }
  });

  it('config/: the overlay docs/install.md gives to turn them off leaves out every policy and binding, and nothing else', async () => {
    const cluster = await testCluster();
    const overlay = join(tempDir('basic-operator-admission-'), 'off');
    mkdirSync(overlay);
    writeFileSync(
      join(overlay, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        'resources:',
        `  - ${relative(overlay, join(CONFIG_DIR, 'default'))}`,
        'patches:',
        '  - target:',
        '      group: admissionregistration.k8s.io',
        '    patch: |-',
        '      $patch: delete',
        '      kind: any',
        '      metadata:',
        '        name: any',
        '',
      ].join('\n'),
    );
    const names = (manifests: Manifest[]) => manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort();
    const full = parseManifests(await runOk(cluster.kubectl, ['kustomize', join(CONFIG_DIR, 'default')]));
    const off = parseManifests(await runOk(cluster.kubectl, ['kustomize', overlay]));
    assert.deepEqual(
      names(off),
      names(full.filter((m) => !m.apiVersion.startsWith('admissionregistration.k8s.io/'))),
    );
    assert.equal(full.length - off.length, POLICIES.length * 2);
  });
});

// ---------------------------------------------------------------------------------------------------

/** The rejection of `call`, as status code and message; fails if it succeeds. */
async function rejection(call: () => Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await call();
  } catch (err) {
    if (err instanceof ApiError) return { code: err.statusCode, message: err.message };
    throw err;
  }
  assert.fail('the API server allowed it');
}

/** A Machine's backup as the operator records one (src/controllers/volumebackup/names.ts). */
function machineBackup(ns: string, name: string, machine: Machine): VolumeBackup {
  const uid = machine.metadata?.uid ?? '';
  return {
    apiVersion: VOLUME_BACKUP.apiVersion,
    kind: VOLUME_BACKUP.kind,
    metadata: {
      name,
      namespace: ns,
      labels: { [MACHINE_LABEL]: machine.metadata?.name ?? '', [MACHINE_UID_LABEL]: uid },
    },
    spec: {
      machineName: machine.metadata?.name ?? '',
      machineUID: uid,
      volumes: [{ name: 'data', claimName: `${machine.metadata?.name}-data` }],
    },
  };
}

function standaloneBackup(ns: string, name: string, labels: Record<string, string> = {}): VolumeBackup {
  return {
    apiVersion: VOLUME_BACKUP.apiVersion,
    kind: VOLUME_BACKUP.kind,
    metadata: { name, namespace: ns, labels },
    spec: { volumes: [{ name: 'data', claimName: 'db-data' }] },
  };
}

/** A Machine or PodMachine whose volumes restore from `backups`, one volume each. */
function restoring<T extends Machine | PodMachine>(
  type: { apiVersion: T['apiVersion']; kind: T['kind'] },
  ns: string,
  name: string,
  backups: string[],
): T {
  return {
    apiVersion: type.apiVersion,
    kind: type.kind,
    metadata: { name, namespace: ns },
    spec: {
      image: 'registry.k8s.io/pause:3.10',
      volumes: backups.map((backup, i) => ({
        name: `v${i}`,
        size: '1Gi',
        mountPath: `/v${i}`,
        restoreFrom: { volumeBackup: backup, volume: 'data' },
      })),
    },
  } as T;
}

function claim(ns: string, name: string, labels: Record<string, string> = {}, owner?: VolumeBackup) {
  const uid = owner?.metadata?.uid;
  const claim: V1PersistentVolumeClaim = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name,
      namespace: ns,
      labels,
      ownerReferences:
        owner && uid
          ? [
              {
                apiVersion: VOLUME_BACKUP.apiVersion,
                kind: VOLUME_BACKUP.kind,
                name: owner.metadata?.name ?? '',
                uid,
                controller: true,
                blockOwnerDeletion: true,
              },
            ]
          : undefined,
    },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  };
  return claim;
}

/** Whether the VolumeBackup CRD in the cluster lets spec.machineName out (the standalone backup). */
async function standaloneAllowed(client: KubeClient): Promise<boolean> {
  const crd = await client.get<V1CustomResourceDefinition>(
    CoreTypes.CustomResourceDefinition,
    undefined,
    `${VOLUME_BACKUP.plural}.${VOLUME_BACKUP.group}`,
  );
  const schema = crd.spec.versions.find((v) => v.storage)?.schema?.openAPIV3Schema;
  return !(schema?.properties?.spec?.required ?? []).includes('machineName');
}

const NOT_YET_STANDALONE =
  'the VolumeBackup CRD in this cluster still requires spec.machineName (config/crd/bases is not ' +
  'regenerated from src/apis/infra/v1alpha1/volumebackup-schema.ts yet): no standalone VolumeBackup can be made';

describe('the admission policies against the API server', () => {
  const run = randomBytes(3).toString('hex');
  const release = `vap-${run}`;
  const operatorSa = 'operator';
  let admin: KubeClient;
  let alice: KubeClient;
  let bob: KubeClient;
  let operator: KubeClient;
  let ns: string;
  let otherNs: string;
  let operatorUser: string;
  let installed: KubeObject[] = [];
  let standalone = false;

  before(async () => {
    admin = await testClient();
    await installCrds();
    standalone = await standaloneAllowed(admin);
    ns = await createNamespace(admin, 'admission');
    otherNs = await createNamespace(admin, 'admission-gone');
    operatorUser = `system:serviceaccount:${ns}:${operatorSa}`;
    alice = await impersonatingClient('alice');
    bob = await impersonatingClient('bob');
    operator = await impersonatingClient(operatorUser);

    await admin.create(CoreTypes.ServiceAccount, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: operatorSa, namespace: ns },
    });
    // alice and the operator's ServiceAccount may both write Machines, VolumeBackups and claims, and
    // create pods (so read claims).
    for (const namespace of [ns, otherNs]) {
      await grantRole(
        admin,
        namespace,
        'machines-and-backups',
        [
          {
            apiGroups: [MACHINE.group],
            resources: [MACHINE.plural, VOLUME_BACKUP.plural],
            verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
          },
          {
            apiGroups: [''],
            resources: ['persistentvolumeclaims'],
            verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
          },
          { apiGroups: [''], resources: ['pods'], verbs: ['create'] },
        ],
        [userSubject('alice'), { kind: 'ServiceAccount', name: operatorSa, namespace: ns }],
      );
    }
    // bob may create Machines, PodMachines and VolumeBackups, get only his own VolumeBackup, and
    // create no pod.
    await grantRole(
      admin,
      ns,
      'backups-only',
      [
        {
          apiGroups: [MACHINE.group],
          resources: [MACHINE.plural, POD_MACHINE.plural, VOLUME_BACKUP.plural],
          verbs: ['create', 'list'],
        },
        {
          apiGroups: [MACHINE.group],
          resources: [VOLUME_BACKUP.plural],
          resourceNames: ['bobs'],
          verbs: ['get'],
        },
      ],
      [userSubject('bob')],
    );

    // The chart's policies, released into the test namespace with the test ServiceAccount as the
    // operator's, and watching this test's two namespaces only: the bindings select nothing else,
    // so other tests running beside this one never meet the policies.
    const toInstall = await renderPolicies(release, ns, operatorSa, [ns, otherNs]);
    assert.equal(toInstall.length, POLICIES.length * 2);
    for (const binding of bindings(toInstall)) {
      assert.deepEqual(
        binding.spec?.matchResources?.namespaceSelector?.matchExpressions,
        [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [ns, otherNs] }],
        `${binding.metadata.name} must select this test's namespaces only`,
      );
    }
    installed = await installPolicies(admin, toInstall);
  });

  after(async () => {
    // Cluster-scoped: gone before the namespaces, whose deletion they would otherwise govern.
    await uninstallPolicies(admin, installed);
    installed = [];
    if (ns) await deleteNamespace(admin, ns);
    if (otherNs) await deleteNamespace(admin, otherNs);
  });

  const forbiddenCreate = new RegExp(
    'only the basic-operator ServiceAccount \\(system:serviceaccount:[a-z0-9-]+:operator\\) may create ' +
      'VolumeBackups that name a Machine \\(spec\\.machineName\\).*create a standalone VolumeBackup ' +
      '\\(no machineName, no machine labels\\) instead',
  );
  const forbiddenChange =
    /only the basic-operator ServiceAccount \(.*\) may change VolumeBackups that name a Machine/;

  it('type-checks: the API server reports no warning on any policy', async () => {
    for (const obj of installed.filter((o) => o.kind === POLICY.kind)) {
      const name = obj.metadata?.name ?? '';
      const checked = await waitFor(`the type check of ${name}`, async () => {
        const policy = await admin.get(POLICY, undefined, name);
        return policy.status?.observedGeneration === policy.metadata?.generation && policy;
      });
      assert.deepEqual(checked.status?.typeChecking?.expressionWarnings ?? [], [], name);
    }
  });

  it("alice's VolumeBackup naming her Machine is denied with the policy's message", async () => {
    // Retried while alice's Role binding reaches the authorizer's cache.
    const db = await waitFor('alice to create her Machine', () =>
      alice.create(MACHINE, {
        apiVersion: MACHINE.apiVersion,
        kind: MACHINE.kind,
        metadata: { name: 'db', namespace: ns },
        spec: {
          image: 'registry.k8s.io/pause:3.10',
          volumes: [{ name: 'data', size: '1Gi', mountPath: '/data' }],
        },
      } as Machine),
    );
    const forged = machineBackup(ns, `db-${(db.metadata?.uid ?? '').slice(0, 8)}`, db);
    // A policy takes a moment to reach the admission chain: until the first denial, undo what got in.
    const denied = await waitFor(
      'the policy to deny alice',
      async () => {
        try {
          await alice.create(VOLUME_BACKUP, forged);
        } catch (err) {
          // Not the policy's (RBAC's, say): waitFor retries.
          if (err instanceof ApiError && /ValidatingAdmissionPolicy/.test(err.message)) return err;
          throw err;
        }
        await admin.delete(VOLUME_BACKUP, ns, forged.metadata?.name ?? '');
        await waitFor('the admitted backup to go', () =>
          admin.get(VOLUME_BACKUP, ns, forged.metadata?.name ?? '').then(
            () => false,
            (err: unknown) => isNotFound(err),
          ),
        );
        return false;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    assert.equal(denied.reason, 'Forbidden');
    assert.match(denied.message, forbiddenCreate);
    assert.match(denied.message, new RegExp(`system:serviceaccount:${ns}:operator`));
    // Without the spec fields, the machine labels alone are denied too.
    const labelSets: Record<string, string>[] = [
      { [MACHINE_LABEL]: 'db' },
      { [MACHINE_UID_LABEL]: db.metadata?.uid ?? '' },
    ];
    for (const labels of labelSets) {
      const body = machineBackup(ns, `labelled-${Object.keys(labels)[0]?.split('/')[1]}`, db);
      const withLabelsOnly = standalone
        ? { ...body, metadata: { ...body.metadata, labels }, spec: { volumes: body.spec.volumes } }
        : { ...body, metadata: { ...body.metadata, labels } };
      const { code, message } = await rejection(() => alice.create(VOLUME_BACKUP, withLabelsOnly));
      assert.equal(code, 403, message);
      assert.match(message, forbiddenCreate);
    }
  });

  it("alice may create a standalone VolumeBackup, but not label it as a Machine's", async (t) => {
    if (!standalone) {
      t.skip(NOT_YET_STANDALONE);
      return;
    }
    const mine = await alice.create(VOLUME_BACKUP, standaloneBackup(ns, 'mine'));
    assert.equal(mine.spec.machineName, undefined);
    const { code, message } = await rejection(() =>
      alice.patch(VOLUME_BACKUP, {
        namespace: ns,
        name: 'mine',
        patchType: 'merge',
        body: { metadata: { labels: { [MACHINE_LABEL]: 'db' } } },
      }),
    );
    assert.equal(code, 403, message);
    assert.match(message, forbiddenChange);
    // Other changes to her own standalone backup stay hers.
    await alice.patch(VOLUME_BACKUP, {
      namespace: ns,
      name: 'mine',
      patchType: 'merge',
      body: { metadata: { annotations: { note: 'before the upgrade' } } },
    });
  });

  it('bob, who may not create pods, is refused a standalone VolumeBackup of a claim; alice, who may, is not', async (t) => {
    if (!standalone) {
      t.skip(NOT_YET_STANDALONE);
      return;
    }
    const refusal =
      /bob may not create VolumeBackup bobs-copy: it copies persistentvolumeclaim db-data, and copying a claim reads it, which takes create on pods in namespace admission-[0-9a-f]+ \(a pod that mounts the claim\); ask for that/;
    const denied = await policyDenial('the standalone-backups policy to deny bob', () =>
      bob.create(VOLUME_BACKUP, standaloneBackup(ns, 'bobs-copy'), { dryRun: true }),
    );
    assert.equal(denied.reason, 'Forbidden');
    assert.match(
      denied.message,
      new RegExp(`ValidatingAdmissionPolicy '${release}-basic-operator-standalone-backups'`),
    );
    assert.match(denied.message, refusal);
    const { code, message } = await rejection(() =>
      bob.create(VOLUME_BACKUP, standaloneBackup(ns, 'bobs-copy')),
    );
    assert.equal(code, 403, message);
    assert.match(message, refusal);
    await assert.rejects(admin.get(VOLUME_BACKUP, ns, 'bobs-copy'), (err) => isNotFound(err));
    // The same copy for alice, who may create pods in the namespace (so read its claims anyway).
    const copy = await alice.create(VOLUME_BACKUP, standaloneBackup(ns, 'alices-copy'));
    assert.equal(copy.spec.volumes[0]?.claimName, 'db-data');
  });

  it('a Machine or PodMachine restoring from a VolumeBackup its creator may not get is refused', async () => {
    const denied = await policyDenial('the backup-restores policy to deny bob', () =>
      bob.create(MACHINE, restoring(MACHINE, ns, 'from-mine', ['mine']), { dryRun: true }),
    );
    assert.equal(denied.reason, 'Forbidden');
    assert.match(
      denied.message,
      new RegExp(`ValidatingAdmissionPolicy '${release}-basic-operator-backup-restores'`),
    );
    assert.match(
      denied.message,
      /bob may not create Machine from-mine, whose volumes restore from VolumeBackup mine: restoring a volume reads the bytes its VolumeBackup copied, which takes get on that VolumeBackup in namespace admission-[0-9a-f]+; ask for that, or restore from a VolumeBackup you may get/,
    );
    // One of two is enough to refuse; a PodMachine he makes himself is held to the same.
    for (const [type, name, backups] of [
      [MACHINE, 'from-both', ['bobs', 'mine']],
      [POD_MACHINE, 'from-mine', ['mine']],
    ] as const) {
      const { code, message } = await rejection(() =>
        bob.create<Machine | PodMachine>(type, restoring(type, ns, name, [...backups])),
      );
      assert.equal(code, 403, message);
      assert.match(
        message,
        new RegExp(`bob may not create ${type.kind} ${name}, whose volumes restore from`),
      );
    }
    // The VolumeBackup granted to him by name: two volumes restore from it, one check.
    await bob.create(MACHINE, restoring(MACHINE, ns, 'from-bobs', ['bobs', 'bobs']));
    // More than two VolumeBackups are checked at once: get on every VolumeBackup of the namespace.
    const three = ['bobs', 'mine', 'alices-copy'];
    const { code, message } = await rejection(() =>
      bob.create(MACHINE, restoring(MACHINE, ns, 'from-three', three)),
    );
    assert.equal(code, 403, message);
    assert.match(
      message,
      /whose volumes restore from 3 VolumeBackups \(bobs, mine, alices-copy\): .*more than two VolumeBackups are checked at once, which takes get on every VolumeBackup of namespace admission-[0-9a-f]+/,
    );
    // alice may get every VolumeBackup of the namespace.
    await alice.create(MACHINE, restoring(MACHINE, ns, 'alices-three', three));
    await alice.create(MACHINE, restoring(MACHINE, ns, 'alices-one', ['mine']));
  });

  it("the operator's ServiceAccount records a Machine's backup; alice may not change it", async () => {
    const review = await operator.request<V1SelfSubjectReview>(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } },
    );
    assert.equal(review.status?.userInfo?.username, operatorUser);
    for (const group of ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated']) {
      assert.ok(
        review.status?.userInfo?.groups?.includes(group),
        `${group} in ${review.status?.userInfo?.groups}`,
      );
    }
    const db = await admin.get(MACHINE, ns, 'db');
    const backup = await operator.create(VOLUME_BACKUP, machineBackup(ns, 'db-recorded', db));
    assert.equal(backup.spec.machineName, 'db');
    for (const body of [
      { metadata: { annotations: { note: 'mine now' } } },
      { metadata: { labels: { [MACHINE_LABEL]: null, [MACHINE_UID_LABEL]: null } } },
    ]) {
      const { code, message } = await rejection(() =>
        alice.patch(VOLUME_BACKUP, { namespace: ns, name: 'db-recorded', patchType: 'merge', body }),
      );
      assert.equal(code, 403, message);
      assert.match(message, forbiddenChange);
    }
    await operator.patch(VOLUME_BACKUP, {
      namespace: ns,
      name: 'db-recorded',
      patchType: 'merge',
      body: { metadata: { annotations: { note: 'the operator may' } } },
    });
  });

  it('alice may not delete, unlabel or make a backup claim; plain claims stay hers; the operator may', async () => {
    // The claims' policy is another policy than the one the first test waited for: it may reach the
    // admission chain later. Until it denies alice, undo what got in.
    await waitFor(
      "the backup claims' policy to deny alice",
      async () => {
        try {
          await alice.create(
            CoreTypes.PersistentVolumeClaim,
            claim(ns, 'probe-data', { [VOLUME_BACKUP_LABEL]: 'probe' }),
          );
        } catch (err) {
          if (err instanceof ApiError && /ValidatingAdmissionPolicy/.test(err.message)) return true;
          throw err;
        }
        await admin.delete(CoreTypes.PersistentVolumeClaim, ns, 'probe-data');
        await waitFor('the admitted claim to go', () =>
          admin.get(CoreTypes.PersistentVolumeClaim, ns, 'probe-data').then(
            () => false,
            (err: unknown) => isNotFound(err),
          ),
        );
        return false;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    await operator.create(
      CoreTypes.PersistentVolumeClaim,
      claim(ns, 'db-recorded-data', { [VOLUME_BACKUP_LABEL]: 'db-recorded' }),
    );
    const deleted = await rejection(() =>
      alice.delete(CoreTypes.PersistentVolumeClaim, ns, 'db-recorded-data'),
    );
    assert.equal(deleted.code, 403, deleted.message);
    assert.match(
      deleted.message,
      /persistentvolumeclaim db-recorded-data holds a copy of VolumeBackup db-recorded: only the basic-operator ServiceAccount \(system:serviceaccount:.*:operator\) and Kubernetes' own controllers may delete it; it goes when its VolumeBackup is deleted/,
    );
    const unlabelled = await rejection(() =>
      alice.patch(CoreTypes.PersistentVolumeClaim, {
        namespace: ns,
        name: 'db-recorded-data',
        patchType: 'merge',
        body: { metadata: { labels: { [VOLUME_BACKUP_LABEL]: null } } },
      }),
    );
    assert.equal(unlabelled.code, 403, unlabelled.message);
    assert.match(
      unlabelled.message,
      /may add, change or remove the label infra\.basicoperator\.dev\/volume-backup of persistentvolumeclaim db-recorded-data \("db-recorded" to ""\)/,
    );
    const made = await rejection(() =>
      alice.create(
        CoreTypes.PersistentVolumeClaim,
        claim(ns, 'fake-data', { [VOLUME_BACKUP_LABEL]: 'db-recorded' }),
      ),
    );
    assert.equal(made.code, 403, made.message);
    assert.match(
      made.message,
      /may create persistentvolumeclaims with the label infra\.basicoperator\.dev\/volume-backup/,
    );
    // Her own claims: created, labelled otherwise, deleted.
    await alice.create(CoreTypes.PersistentVolumeClaim, claim(ns, 'scratch', { app: 'db' }));
    await alice.patch(CoreTypes.PersistentVolumeClaim, {
      namespace: ns,
      name: 'scratch',
      patchType: 'merge',
      body: { metadata: { labels: { tier: 'cache' } } },
    });
    await alice.delete(CoreTypes.PersistentVolumeClaim, ns, 'scratch');
    // The operator deletes a backup claim (e.g. one it failed to fill).
    await operator.delete(CoreTypes.PersistentVolumeClaim, ns, 'db-recorded-data');
  });

  it("Kubernetes' controllers, as ServiceAccounts of kube-system, may update a Machine's backup and delete backup claims", async () => {
    // What --use-service-account-credentials makes of kube-controller-manager's controllers (kubeadm,
    // kind and managed clusters); this cluster's runs as a system:masters user, covered below.
    const collector = await impersonatingClient(
      'system:serviceaccount:kube-system:generic-garbage-collector',
    );
    const namespaceController = await impersonatingClient(
      'system:serviceaccount:kube-system:namespace-controller',
    );
    const db = await admin.get(MACHINE, ns, 'db');
    await operator.create(VOLUME_BACKUP, machineBackup(ns, 'db-controllers', db));
    await collector.patch(VOLUME_BACKUP, {
      namespace: ns,
      name: 'db-controllers',
      patchType: 'merge',
      body: { metadata: { finalizers: null } },
    });
    for (const [name, client] of [
      ['collected-data', collector],
      ['namespace-data', namespaceController],
    ] as const) {
      await operator.create(
        CoreTypes.PersistentVolumeClaim,
        claim(ns, name, { [VOLUME_BACKUP_LABEL]: 'db-controllers' }),
      );
      await client.delete(CoreTypes.PersistentVolumeClaim, ns, name);
    }
  });

  it('system:masters (break-glass, and what this cluster runs kube-controller-manager as) may delete a backup claim, not forge a backup', async () => {
    await operator.create(
      CoreTypes.PersistentVolumeClaim,
      claim(ns, 'masters-data', { [VOLUME_BACKUP_LABEL]: 'db-recorded' }),
    );
    await admin.delete(CoreTypes.PersistentVolumeClaim, ns, 'masters-data');
    // An export of a Machine's backup applied again, even by a cluster admin, is not the operator's.
    const db = await admin.get(MACHINE, ns, 'db');
    const { code, message } = await rejection(() =>
      admin.create(VOLUME_BACKUP, machineBackup(ns, 'db-reapplied', db)),
    );
    assert.equal(code, 403, message);
    assert.match(message, forbiddenCreate);
  });

  it('the garbage collector deletes backup claims with their VolumeBackup, deleted in the foreground', async () => {
    const db = await admin.get(MACHINE, ns, 'db');
    const backup = await operator.create(VOLUME_BACKUP, machineBackup(ns, 'db-collected', db));
    await operator.create(
      CoreTypes.PersistentVolumeClaim,
      claim(ns, 'db-collected-data', { [VOLUME_BACKUP_LABEL]: 'db-collected' }, backup),
    );
    // Foreground: the collector deletes the claim, then takes its finalizer off the VolumeBackup
    // (an update of a Machine's backup: allowed to Kubernetes' controllers).
    await alice.delete(VOLUME_BACKUP, ns, 'db-collected', { propagationPolicy: 'Foreground' });
    const gone = (type: ResourceType, name: string) => () =>
      admin.get(type, ns, name).then(
        () => false,
        (err: unknown) => isNotFound(err),
      );
    await waitFor(
      'the garbage collector to delete the backup claim',
      gone(CoreTypes.PersistentVolumeClaim, 'db-collected-data'),
      {
        timeoutMs: 60_000,
      },
    );
    await waitFor('the VolumeBackup to go after its claim', gone(VOLUME_BACKUP, 'db-collected'), {
      timeoutMs: 60_000,
    });
  });

  it("the namespace controller deletes a namespace's backup claims with it", async () => {
    await operator.create(
      CoreTypes.PersistentVolumeClaim,
      claim(otherNs, 'kept-data', { [VOLUME_BACKUP_LABEL]: 'kept' }),
    );
    await admin.delete(CoreTypes.Namespace, undefined, otherNs);
    await waitFor(
      `namespace ${otherNs} to be deleted`,
      () =>
        admin.get(CoreTypes.Namespace, undefined, otherNs).then(
          () => false,
          (err: unknown) => isNotFound(err),
        ),
      { timeoutMs: 90_000, intervalMs: 500 },
    );
  });

  it("without the operator's ServiceAccount (no operator runs), the policies let everything through", async () => {
    await operator.create(
      CoreTypes.PersistentVolumeClaim,
      claim(ns, 'left-data', { [VOLUME_BACKUP_LABEL]: 'db-recorded' }),
    );
    await admin.delete(CoreTypes.ServiceAccount, ns, operatorSa);
    // The policies learn of the deletion through an informer: retried until then.
    await waitFor('alice to delete the backup claim', () =>
      alice.delete(CoreTypes.PersistentVolumeClaim, ns, 'left-data').then(() => true),
    );
  });
});
