// Least privilege, proven (docs/install.md, "What a user who may only create Machines and
// VolumeBackups can do"): a tenant whose Role in one namespace allows only Machines and
// VolumeBackups tries every way of making the operator act on an object the tenant names but does
// not own. The operator runs in this process with every controller, watching the tenant's
// namespace and another, behind the chart's admission policies. Each refusal is checked on the
// tenant's side (a condition, an Event, a denial) and on the object's: nothing happens to it that
// the tenant could not have done alone.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { V1PersistentVolumeClaim, V1SubjectAccessReview } from '@kubernetes/client-node';
import { testClient } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import {
  ADOPTABLE_BY_ANNOTATION,
  MACHINE,
  type Machine,
  POD_MACHINE,
  type PodMachine,
  STOP_REQUESTED_ANNOTATION,
  VOLUME_BACKUP,
  type VolumeBackup,
} from '../../../src/apis/index.ts';
import { registerControllers } from '../../../src/controllers/index.ts';
import { ApiError, isNotFound } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import type { Manager } from '../../../src/runtime/manager/manager.ts';
import { grantRole, impersonatingClient, userSubject } from '../../support/impersonation.ts';
import { startTestManager } from '../../support/manager.ts';
import { OPERATOR_DEFAULTS } from '../../support/operator-options.ts';
import {
  condition,
  controllerUid,
  getPodMachine,
  machine,
  prepareCluster,
  releaseMachines,
  waitForEvent,
  waitForGone,
  waitForMachine,
} from '../machine/helpers.ts';
import { installPolicies, policyDenial, renderPolicies, uninstallPolicies } from '../packaging/admission.ts';

const RUN = randomBytes(3).toString('hex');
const TENANT = `tenant-${RUN}`;
const PAUSE = 'registry.k8s.io/pause:3.10';

/** The tenant's Machine that uses PodMachine `target` (in `namespace`, when given) as its provider. */
function referencing(ns: string, name: string, target: string, namespace?: string): Machine {
  return {
    apiVersion: MACHINE.apiVersion,
    kind: MACHINE.kind,
    metadata: { name, namespace: ns },
    spec: {
      infrastructureRef: {
        apiVersion: POD_MACHINE.apiVersion,
        kind: POD_MACHINE.kind,
        name: target,
        ...(namespace ? { namespace } : {}),
      },
    },
  };
}

/** A PodMachine made by hand (by the admin), with `annotations`. */
function podMachine(ns: string, name: string, annotations?: Record<string, string>): PodMachine {
  return {
    apiVersion: POD_MACHINE.apiVersion,
    kind: POD_MACHINE.kind,
    metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) },
    spec: { image: PAUSE },
  };
}

/**
 * What would show that the operator acted on the object: who controls it, what it is annotated
 * with (a grant used up, a stop requested), its finalizers and its deletion; and that it is the same
 * object (uid).
 */
function footprint(obj: KubeObject | undefined) {
  return {
    uid: obj?.metadata?.uid,
    ownerReferences: obj?.metadata?.ownerReferences,
    annotations: obj?.metadata?.annotations,
    finalizers: obj?.metadata?.finalizers,
    deletionTimestamp: obj?.metadata?.deletionTimestamp,
  };
}

const reasonIs = (reason: string) => (m: Machine) => condition(m, 'InfrastructureReady')?.reason === reason;

describe('a tenant who may only create Machines and VolumeBackups in one namespace', () => {
  let admin: KubeClient;
  let tenant: KubeClient;
  let ns: string;
  let otherNs: string;
  let manager: Manager | undefined;
  let installed: KubeObject[] = [];
  /** The admin's objects the tenant names, as they were before the tenant named them. */
  const original: Record<string, ReturnType<typeof footprint>> = {};
  let owned: Machine;

  before(async () => {
    await prepareCluster(1);
    admin = await testClient();
    ns = await createNamespace(admin, 'tenant');
    otherNs = await createNamespace(admin, 'tenant-other');
    tenant = await impersonatingClient(TENANT);
    await grantRole(
      admin,
      ns,
      'machines-and-backups',
      [
        {
          apiGroups: [MACHINE.group],
          resources: [MACHINE.plural, VOLUME_BACKUP.plural],
          verbs: ['create', 'get', 'list', 'watch', 'delete'],
        },
        { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['get', 'list', 'watch'] },
      ],
      [userSubject(TENANT)],
    );
    // The chart's policies, with a ServiceAccount of the namespace standing for the operator's (the
    // operator itself runs with the test's admin credentials), bound in the two namespaces only.
    await admin.create(CoreTypes.ServiceAccount, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'operator', namespace: ns },
    });
    installed = await installPolicies(
      admin,
      await renderPolicies(`tenant-${RUN}`, ns, 'operator', [ns, otherNs]),
    );
    manager = await startTestManager([ns, otherNs], (m) => registerControllers(m, OPERATOR_DEFAULTS));

    // The admin's objects: a PodMachine with no controller and no grant; an inline Machine, its
    // PodMachine and its claim; a PodMachine in the other namespace that grants itself to the
    // tenant's Machine by name.
    await admin.create(POD_MACHINE, podMachine(ns, 'loose'));
    owned = await admin.create(
      MACHINE,
      machine(ns, 'owned', { volumes: [{ name: 'data', size: '1Gi', mountPath: '/data' }] }),
    );
    await admin.create(
      POD_MACHINE,
      podMachine(otherNs, 'elsewhere', { [ADOPTABLE_BY_ANNOTATION]: 'grab-elsewhere' }),
    );
    await waitFor('PodMachine owned, controlled by Machine owned, and its claim', async () => {
      const pm = await getPodMachine(admin, ns, 'owned');
      if (controllerUid(pm) !== owned.metadata.uid) return false;
      return admin.get<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim, ns, 'owned-data');
    });
    for (const [namespace, name] of [
      [ns, 'loose'],
      [ns, 'owned'],
      [otherNs, 'elsewhere'],
    ] as const) {
      original[`${namespace}/${name}`] = footprint(await getPodMachine(admin, namespace, name));
    }
  });

  after(async () => {
    await manager?.stop();
    if (!admin) return;
    // Cluster-scoped: gone before the namespaces, whose deletion they would otherwise govern.
    await uninstallPolicies(admin, installed);
    for (const namespace of [ns, otherNs]) {
      if (!namespace) continue;
      await releaseMachines(admin, namespace);
      await deleteNamespace(admin, namespace);
    }
  });

  /** Whether the API server's authorizer lets the tenant do `verb` on `resource` in `namespace`. */
  async function tenantMay(verb: string, group: string, resource: string, namespace: string) {
    const review = await admin.request<V1SubjectAccessReview>(
      'POST',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user: TENANT, resourceAttributes: { verb, group, resource, namespace } },
        },
      },
    );
    return review.status?.allowed === true;
  }

  /** Asserts the admin's PodMachine is as it was: not owned, not annotated, not stopped, not deleted. */
  async function assertUntouched(namespace: string, name: string) {
    const pm = await getPodMachine(admin, namespace, name);
    assert.ok(pm, `PodMachine ${namespace}/${name} still exists`);
    assert.deepEqual(footprint(pm), original[`${namespace}/${name}`], `PodMachine ${namespace}/${name}`);
    assert.equal(pm.metadata.annotations?.[STOP_REQUESTED_ANNOTATION], undefined);
    assert.notEqual(pm.status?.stopped, true);
  }

  it('the tenant may create Machines there, and may not touch PodMachines, pods or the other namespace', async () => {
    await waitFor("the tenant's Role to reach the authorizer", () =>
      tenantMay('create', MACHINE.group, MACHINE.plural, ns),
    );
    for (const [verb, group, resource, namespace] of [
      ['patch', POD_MACHINE.group, POD_MACHINE.plural, ns],
      ['delete', POD_MACHINE.group, POD_MACHINE.plural, ns],
      ['create', '', 'pods', ns],
      ['patch', MACHINE.group, MACHINE.plural, ns],
      ['create', MACHINE.group, MACHINE.plural, otherNs],
      ['get', POD_MACHINE.group, POD_MACHINE.plural, otherNs],
    ] as const) {
      assert.equal(
        await tenantMay(verb, group, resource, namespace),
        false,
        `${verb} ${resource} in ${namespace}`,
      );
    }
  });

  it('a Machine naming a PodMachine the admin made, without a grant: InfrastructureNotAdoptable, the PodMachine untouched', async () => {
    await tenant.create(MACHINE, referencing(ns, 'grab-loose', 'loose'));
    const refused = await waitForMachine(
      tenant,
      ns,
      'grab-loose',
      'InfrastructureNotAdoptable',
      reasonIs('InfrastructureNotAdoptable'),
    );
    assert.match(
      condition(refused, 'InfrastructureReady')?.message ?? '',
      /PodMachine loose has no controller and does not say this Machine may adopt it/,
    );
    await waitForEvent(tenant, ns, 'Machine', 'grab-loose', 'InfrastructureNotAdoptable');
    await assertUntouched(ns, 'loose');
  });

  it("a Machine naming another Machine's PodMachine: InfrastructureOwnedByOther, the PodMachine untouched", async () => {
    await tenant.create(MACHINE, referencing(ns, 'grab-owned', 'owned'));
    const refused = await waitForMachine(
      tenant,
      ns,
      'grab-owned',
      'InfrastructureOwnedByOther',
      reasonIs('InfrastructureOwnedByOther'),
    );
    assert.match(condition(refused, 'InfrastructureReady')?.message ?? '', /controlled by Machine owned/);
    await waitForEvent(tenant, ns, 'Machine', 'grab-owned', 'InfrastructureOwnedByOther');
    await assertUntouched(ns, 'owned');
  });

  it('a Machine naming a PodMachine of another namespace, even one that grants itself to it: CrossNamespaceReference, untouched', async () => {
    await tenant.create(MACHINE, referencing(ns, 'grab-elsewhere', 'elsewhere', otherNs));
    const refused = await waitForMachine(
      tenant,
      ns,
      'grab-elsewhere',
      'CrossNamespaceReference',
      reasonIs('CrossNamespaceReference'),
    );
    assert.equal(refused.status?.phase, 'Failed');
    await waitForEvent(tenant, ns, 'Machine', 'grab-elsewhere', 'CrossNamespaceReference');
    await assertUntouched(otherNs, 'elsewhere');
  });

  it("an inline Machine named like the admin's PodMachine: InfrastructureOwnedByOther, never adopted", async () => {
    // With volumes and the default backup policy: deleting it finds no provider object of its own and
    // no claim it ever had, so it goes without a backup (the tenant could not skip one: no patch).
    await tenant.create(MACHINE, machine(ns, 'loose'));
    const refused = await waitForMachine(
      tenant,
      ns,
      'loose',
      'InfrastructureOwnedByOther',
      reasonIs('InfrastructureOwnedByOther'),
    );
    assert.match(
      condition(refused, 'InfrastructureReady')?.message ?? '',
      /PodMachine loose was not made for this Machine \(it has no controller\)/,
    );
    await assertUntouched(ns, 'loose');
  });

  it('deleting those Machines leaves every object they named as it was: not stopped, not deleted, not owned', async () => {
    const names = ['grab-loose', 'grab-owned', 'grab-elsewhere', 'loose'];
    for (const name of names) await tenant.delete(MACHINE, ns, name);
    for (const name of names) await waitForGone(tenant, ns, name, 90_000);
    await assertUntouched(ns, 'loose');
    await assertUntouched(ns, 'owned');
    await assertUntouched(otherNs, 'elsewhere');
    // The admin's Machine keeps its PodMachine and is not being deleted.
    const stillOwned = await admin.get(MACHINE, ns, 'owned');
    assert.equal(stillOwned.metadata.deletionTimestamp, undefined);
    assert.equal(controllerUid(await getPodMachine(admin, ns, 'owned')), owned.metadata.uid);
  });

  it("a standalone VolumeBackup of another Machine's claim: refused at admission (the tenant may not create pods)", async () => {
    const copy: VolumeBackup = {
      apiVersion: VOLUME_BACKUP.apiVersion,
      kind: VOLUME_BACKUP.kind,
      metadata: { name: 'copy-of-owned', namespace: ns },
      spec: { volumes: [{ name: 'data', claimName: 'owned-data' }] },
    };
    const refusal = new RegExp(
      `${TENANT} may not create VolumeBackup copy-of-owned: it copies persistentvolumeclaim owned-data, and copying a claim reads it, which takes create on pods in namespace ${ns}`,
    );
    const denied = await policyDenial('the standalone-backups policy to deny the tenant', () =>
      tenant.create(VOLUME_BACKUP, copy, { dryRun: true }),
    );
    assert.match(denied.message, refusal);
    const err = await tenant.create(VOLUME_BACKUP, copy).then(
      () => assert.fail('the API server admitted the copy'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApiError && err.statusCode === 403, String(err));
    assert.match(err.message, refusal);
    await assert.rejects(admin.get(VOLUME_BACKUP, ns, 'copy-of-owned'), (e) => isNotFound(e));
  });

  it('a VolumeBackup naming a Machine: refused at admission (only the operator records one)', async () => {
    const uid = owned.metadata.uid ?? '';
    const forged: VolumeBackup = {
      apiVersion: VOLUME_BACKUP.apiVersion,
      kind: VOLUME_BACKUP.kind,
      metadata: {
        name: `owned-${uid.slice(0, 8)}`,
        namespace: ns,
        labels: { 'infra.basicoperator.dev/machine': 'owned', 'infra.basicoperator.dev/machine-uid': uid },
      },
      spec: { machineName: 'owned', machineUID: uid, volumes: [{ name: 'data', claimName: 'owned-data' }] },
    };
    const denied = await policyDenial('the machine-backups policy to deny the tenant', () =>
      tenant.create(VOLUME_BACKUP, forged, { dryRun: true }),
    );
    assert.equal(denied.reason, 'Forbidden');
    assert.match(
      denied.message,
      new RegExp(
        `only the basic-operator ServiceAccount \\(system:serviceaccount:${ns}:operator\\) may create VolumeBackups that name a Machine`,
      ),
    );
    const err = await tenant.create(VOLUME_BACKUP, forged).then(
      () => assert.fail('the API server admitted the forged backup'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApiError && err.statusCode === 403, String(err));
    await assert.rejects(admin.get(VOLUME_BACKUP, ns, forged.metadata.name ?? ''), (e) => isNotFound(e));
  });
});
