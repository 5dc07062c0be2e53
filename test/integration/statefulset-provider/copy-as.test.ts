// Backups of a Machine with a reference copy as its provider's pod runs, in a namespace that enforces
// Pod Security `restricted`: the StatefulSetMachine (its own process, its own RBAC) reports whom its
// pod runs as in the contract's status.copyAs, the Machine controller copies it into the Machine's
// status, and machine-backup records it in the VolumeBackup's spec.copyAs, so the copy pods run as
// the database's user (kwok plays the mover: e2e/providers/local/kwok-stages.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { labelNamespace } from '../../../e2e/support/namespace.ts';
import type { OperatorProcess } from '../../../e2e/support/operator-process.ts';
import { STATEFULSET_MACHINE } from '../../../examples/statefulset-provider/src/api.ts';
import { MACHINE, type Machine, VOLUME_BACKUP_FINALIZER } from '../../../src/apis/index.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import {
  backups,
  controllerUid,
  isComplete,
  jobs,
  type MachineSuite,
  startMachineSuite,
  stopMachineSuite,
  waitForGone,
  waitForMachine,
} from '../machine/helpers.ts';
import { installProvider, startProvider, statefulSetMachine } from './provider.ts';

const POSTGRES = { runAsUser: 999, runAsGroup: 999, fsGroup: 999 };

describe('StatefulSetMachine provider: a Machine referring to it is backed up as its pod runs, under restricted', () => {
  let suite: MachineSuite | undefined;
  let client: KubeClient;
  let ns = '';
  let provider: OperatorProcess | undefined;

  before(async () => {
    // The claim of the set and the backup claim.
    suite = await startMachineSuite('stsm-copy-as', 4);
    ({ client, ns } = suite);
    await installProvider(4);
    await labelNamespace(client, ns, {
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/enforce-version': 'latest',
    });
    provider = await startProvider(ns);
  });
  after(async () => {
    // The provider first: the suite's stop deletes the namespace, whose objects it would chase.
    await provider?.stop();
    await stopMachineSuite(suite);
  });

  it("reports the pod's user in the Machine's status.copyAs, and the backup's copies run as it", async () => {
    await client.create(
      STATEFULSET_MACHINE,
      statefulSetMachine(ns, 'db', {
        volumes: [{ name: 'data', size: '1Gi', mountPath: '/var/lib/postgresql' }],
        podSecurityContext: POSTGRES,
      }),
    );
    const machine: Machine = {
      apiVersion: MACHINE.apiVersion,
      kind: MACHINE.kind,
      metadata: { name: 'db', namespace: ns },
      spec: {
        infrastructureRef: {
          apiVersion: STATEFULSET_MACHINE.apiVersion,
          kind: STATEFULSET_MACHINE.kind,
          name: 'db',
        },
      },
    };
    await client.create(MACHINE, machine);
    const m = await waitForMachine(
      client,
      ns,
      'db',
      'Running with its claim and copyAs reported, holding the backup finalizer',
      (x) =>
        x.status?.phase === 'Running' &&
        (x.metadata.finalizers ?? []).includes(VOLUME_BACKUP_FINALIZER) &&
        x.status.volumes?.[0]?.claimName === 'data-db-0' &&
        x.status.copyAs !== undefined,
    );
    assert.deepEqual(m.status?.copyAs, POSTGRES, "the provider's report, copied by the Machine controller");

    await client.delete(MACHINE, ns, 'db');
    await waitForGone(client, ns, 'db', 120_000);
    const backup = (await backups(client, ns)).find((b) => b.spec.machineUID === m.metadata.uid);
    assert.ok(backup, 'the operator recorded a VolumeBackup');
    assert.deepEqual(backup.spec.copyAs, POSTGRES);
    assert.deepEqual(backup.spec.volumes, [{ name: 'data', claimName: 'data-db-0' }]);
    assert.equal(backup.status?.phase, 'Completed');
    const copy = (await jobs(client, ns)).find((j) => controllerUid(j) === backup.metadata.uid);
    assert.ok(copy && isComplete(copy), 'the copy Job ran under restricted');
    assert.deepEqual(copy.spec?.template.spec?.securityContext, {
      runAsNonRoot: true,
      ...POSTGRES,
      fsGroupChangePolicy: 'OnRootMismatch',
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });
});
