// `Stopped` tells the VolumeBackup controller it may copy a Machine's claims, so it must not rest on a
// cache that is behind. Here the Machine reconciler runs against the real API server with a Job cache
// that never saw a restore Job still running: it must read the Jobs live and report Stopping.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { MACHINE, type Machine, VOLUME_BACKUP, type VolumeBackup } from '../../../src/apis/index.ts';
import { ROLE_LABEL, restoreJobName } from '../../../src/controllers/machine/names.ts';
import { MachineReconciler } from '../../../src/controllers/machine/reconciler.ts';
import { Informer } from '../../../src/runtime/cache/informer.ts';
import { isNotFound } from '../../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { isBeingDeleted, type KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes, type ResourceType } from '../../../src/runtime/client/resource.ts';
import { eventsFor } from '../../../src/runtime/events/index.ts';
import { controllerReference } from '../../../src/runtime/write/owner-refs.ts';
import { testClient } from '../../support/cluster.ts';
import { testLogger } from '../../support/log.ts';
import { MemoryEventRecorder } from '../../support/memory-event-recorder.ts';
import { createNamespace, deleteNamespace } from '../../support/namespace.ts';
import { reconcileContext } from '../../support/reconcile-context.ts';
import { waitFor } from '../../support/wait.ts';
import { machine, prepareCluster, releaseMachines } from './helpers.ts';

const HOLD = 'example.com/test-hold';

describe('Stopped with a stale Job cache', () => {
  let client: KubeClient;
  let ns: string;
  const stop = new AbortController();

  before(async () => {
    await prepareCluster(4);
    client = await testClient();
    ns = await createNamespace(client, 'machine-stale');
  });
  after(async () => {
    stop.abort();
    await releaseMachines(client, ns);
    await deleteNamespace(client, ns);
  });

  function informer<T extends KubeObject>(type: ResourceType<T>, started: boolean): Informer<T> {
    const inf = new Informer<T>(client, type, { namespaces: [ns] }, testLogger());
    if (started) inf.start(stop.signal);
    return inf;
  }

  it('reports Stopping, not Stopped, and deletes the restore Job the cache does not show', async () => {
    const spec = machine(ns, 'restoring', {
      volumes: [
        {
          name: 'data',
          size: '1Gi',
          mountPath: '/data',
          restoreFrom: { volumeBackup: 'old-backup', volume: 'data' },
        },
      ],
      backup: { policy: 'None' },
    });
    const created = await client.create<Machine>(MACHINE, {
      ...spec,
      metadata: { ...spec.metadata, finalizers: [HOLD] },
    });
    // A restore Job of this Machine that is still copying: its pod can never be scheduled.
    const jobName = restoreJobName(created, { name: 'data' });
    await client.create<V1Job>(CoreTypes.Job, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: jobName,
        namespace: ns,
        labels: { [ROLE_LABEL]: 'restore' },
        ownerReferences: [controllerReference(created, MACHINE)],
      },
      spec: {
        backoffLimit: 0,
        template: {
          spec: {
            restartPolicy: 'Never',
            nodeSelector: { 'example.com/no-such-node': 'true' },
            containers: [{ name: 'copy', image: 'busybox:1.36' }],
          },
        },
      },
    });
    await client.delete(MACHINE, ns, 'restoring');

    const machines = informer<Machine>(MACHINE, true);
    const pods = informer<V1Pod>(CoreTypes.Pod, true);
    const claims = informer<V1PersistentVolumeClaim>(CoreTypes.PersistentVolumeClaim, true);
    const backups = informer<VolumeBackup>(VOLUME_BACKUP, true);
    const staleJobs = informer<V1Job>(CoreTypes.Job, false); // never started: it shows no Job
    await Promise.all([machines, pods, claims, backups].map((i) => i.waitForSync()));
    await waitFor('the cached Machine to be marked deleted', () => {
      const m = machines.get(ns, 'restoring');
      return m !== undefined && isBeingDeleted(m);
    });
    const reconciler = new MachineReconciler({
      client,
      machines,
      pods,
      claims,
      jobs: staleJobs,
      backups,
      events: eventsFor(new MemoryEventRecorder(), 'machine', MACHINE),
      copyImage: 'busybox:1.36',
      restoreDeadlineSeconds: 3600,
    });
    const ctx = reconcileContext<Machine>(stop.signal);
    await reconciler.reconcile({ namespace: ns, name: 'restoring' }, ctx);

    assert.equal(ctx.status.last('restoring')?.phase, 'Stopping', 'a restore Job still runs: not Stopped');
    const job = await client.get<V1Job>(CoreTypes.Job, ns, jobName).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    assert.ok(job === undefined || isBeingDeleted(job), 'the running restore Job is being deleted');
  });
});
