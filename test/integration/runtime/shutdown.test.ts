import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import { testClient, testCluster } from '../../support/cluster.ts';
import {
  DONE_ANNOTATION,
  fixtureFlags,
  SLOW_FINISHED,
  SLOW_STARTED,
  startFixture,
} from '../../support/fixture-operator.ts';
import { createNamespace, deleteNamespace } from '../../support/namespace.ts';
import { MANAGER_LOG, type OperatorProcess } from '../../support/operator-process.ts';
import { waitForQueue } from '../../support/queue-metrics.ts';

// Long enough that SIGTERM lands inside it even when this machine is slow.
const RECONCILE_MS = 6_000;

const slowConfigMap = (namespace: string, name: string): V1ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, labels: { test: 'slow' } },
});

describe('graceful shutdown of an operator process', () => {
  let client: KubeClient;
  let ns: string;
  let operator: OperatorProcess | undefined;

  before(async () => {
    client = await testClient();
    ns = await createNamespace(client, 'shutdown');
  });
  after(async () => {
    await operator?.stop({ signal: 'SIGKILL' });
    await deleteNamespace(client, ns);
  });

  it('finishes the in-flight reconcile, starts no new one, and exits 0 on SIGTERM', {
    timeout: 60_000,
  }, async (t) => {
    const { kubeconfig } = await testCluster();
    // One worker, so the second and third objects wait in the queue behind the first.
    operator = startFixture('operator', [...fixtureFlags(kubeconfig, ns), '--concurrency', 'slow=1'], {
      FIXTURE_SLOW_RECONCILE_MS: String(RECONCILE_MS),
    });
    const p = operator;
    await p.controllersStarted();
    const { metrics } = await p.ports();

    await client.create(CoreTypes.ConfigMap, slowConfigMap(ns, 'slow-0'));
    const started = await p.waitForLog('the first reconcile', (l) => l.message === SLOW_STARTED);
    assert.equal(started.configMap, 'slow-0');
    const startedAt = Date.now();
    await client.create(CoreTypes.ConfigMap, slowConfigMap(ns, 'slow-1'));
    await client.create(CoreTypes.ConfigMap, slowConfigMap(ns, 'slow-2'));
    // Without this, "no new reconcile after SIGTERM" would also hold if they had not arrived yet.
    await waitForQueue(metrics, 'slow', 'slow-1 and slow-2 queued behind slow-0', (q) => {
      return q.depth === 2 && q.active === 1;
    });

    const terminatedAt = Date.now();
    p.kill('SIGTERM');
    await p.waitForLog('the signal', (l) => l.message === MANAGER_LOG.receivedSignal);
    // An event after the signal must not start a reconcile either.
    await client.patch(CoreTypes.ConfigMap, {
      namespace: ns,
      name: 'slow-1',
      patchType: 'merge',
      body: {
        metadata: { annotations: { touched: 'after-sigterm' } },
      },
    });
    const exit = await p.exitWithin(20_000);
    const exitedAfterMs = Date.now() - terminatedAt;
    t.diagnostic(
      `SIGTERM ${terminatedAt - startedAt} ms into a ${RECONCILE_MS} ms reconcile; exit ${exit.code} after ${exitedAfterMs} ms`,
    );

    assert.equal(exit.code, 0, p.describe());
    const signalAt = p.indexOf(MANAGER_LOG.receivedSignal);
    const starts = p.logs.filter((l) => l.message === SLOW_STARTED).map((l) => l.configMap);
    assert.deepEqual(starts, ['slow-0'], 'only the reconcile in flight at SIGTERM ever ran');
    assert.equal(p.indexOf(SLOW_STARTED, signalAt), -1, 'no reconcile started after SIGTERM');
    assert.ok(
      p.indexOf(SLOW_FINISHED, signalAt) > signalAt,
      'the in-flight reconcile finished after SIGTERM',
    );
    const annotations = async (name: string) =>
      (await client.get<V1ConfigMap>(CoreTypes.ConfigMap, ns, name)).metadata?.annotations ?? {};
    assert.ok(
      (await annotations('slow-0'))[DONE_ANNOTATION],
      'the side effect of the in-flight reconcile landed',
    );
    // The process is gone: what it did not stamp now, nobody stamps later.
    assert.equal((await annotations('slow-1'))[DONE_ANNOTATION], undefined);
    assert.equal((await annotations('slow-2'))[DONE_ANNOTATION], undefined);
  });
});
