import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap, V1Lease } from '@kubernetes/client-node';
import { testClient, testCluster } from '../../../e2e/support/cluster.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { MANAGER_LOG, type OperatorProcess } from '../../../e2e/support/operator-process.ts';
import { waitForQueue } from '../../../e2e/support/queue-metrics.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import {
  DONE_ANNOTATION,
  fixtureFlags,
  SLOW_FINISHED,
  SLOW_STARTED,
  startFixture,
} from '../../support/fixture-operator.ts';

// Long enough that SIGTERM lands inside it even when this machine is slow.
const RECONCILE_MS = 6_000;
const SHORT_TIMEOUT = '1s';
// Far longer than any shutdown: only the timeout can end it.
const BLOCKED_RECONCILE_MS = 120_000;
const DRAIN_UNFINISHED = 'shutdown: in-flight reconciles did not finish in time';

const slowConfigMap = (namespace: string, name: string): V1ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, labels: { test: 'slow' } },
});

describe('graceful shutdown of an operator process', () => {
  let client: KubeClient;
  const namespaces: string[] = [];
  const operators: OperatorProcess[] = [];
  const newNamespace = async () => {
    const ns = await createNamespace(client, 'shutdown');
    namespaces.push(ns);
    return ns;
  };
  const startOperator = (name: string, args: string[], env: NodeJS.ProcessEnv) => {
    const p = startFixture(name, args, env);
    operators.push(p);
    return p;
  };

  before(async () => {
    client = await testClient();
  });
  after(async () => {
    await Promise.all(operators.map((p) => p.stop({ signal: 'SIGKILL' })));
    await Promise.all(namespaces.map((ns) => deleteNamespace(client, ns)));
  });

  it('finishes the in-flight reconcile, starts no new one, and exits 0 on SIGTERM', {
    timeout: 60_000,
  }, async (t) => {
    const { kubeconfig } = await testCluster();
    const ns = await newNamespace();
    // One worker, so the second and third objects wait in the queue behind the first.
    const p = startOperator('operator', [...fixtureFlags(kubeconfig, ns), '--concurrency', 'slow=1'], {
      FIXTURE_SLOW_RECONCILE_MS: String(RECONCILE_MS),
    });
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

  it('stops within --graceful-shutdown-timeout when a reconcile outlasts it, and logs that the drain did not finish', {
    timeout: 60_000,
  }, async (t) => {
    const { kubeconfig } = await testCluster();
    const ns = await newNamespace();
    const leaseName = 'shutdown-timeout';
    const p = startOperator(
      'operator (1s timeout)',
      [
        ...fixtureFlags(kubeconfig, ns),
        `--graceful-shutdown-timeout=${SHORT_TIMEOUT}`,
        '--leader-elect',
        '--leader-election-namespace',
        ns,
        '--leader-election-id',
        leaseName,
      ],
      { FIXTURE_SLOW_RECONCILE_MS: String(BLOCKED_RECONCILE_MS) },
    );
    await p.controllersStarted();
    await client.create(CoreTypes.ConfigMap, slowConfigMap(ns, 'blocked'));
    await p.waitForLog('the reconcile that blocks', (l) => l.message === SLOW_STARTED);

    const terminatedAt = Date.now();
    p.kill('SIGTERM');
    // Without the timeout wired, the drain alone waits 30 s: this fails rather than waits.
    const exit = await p.exitWithin(20_000);
    const stopMs = Date.now() - terminatedAt;
    t.diagnostic(
      `--graceful-shutdown-timeout=${SHORT_TIMEOUT}: exit ${exit.code} ${stopMs} ms after SIGTERM`,
    );

    assert.equal(exit.code, 0, p.describe());
    // Generous: process exit and log collection add to the timeout on a slow machine.
    assert.ok(stopMs < 5_000, `stopped ${stopMs} ms after SIGTERM\n${p.describe()}`);
    const signalAt = p.indexOf(MANAGER_LOG.receivedSignal);
    const drainWarning = p.logs.findIndex(
      (l, i) => i > signalAt && l.message === DRAIN_UNFINISHED && l.controller === 'slow',
    );
    assert.ok(drainWarning > signalAt, `no "${DRAIN_UNFINISHED}" from the slow controller\n${p.describe()}`);
    assert.equal(p.indexOf(SLOW_FINISHED), -1, 'the blocked reconcile was cut off, not finished');
    const lease = await client.get<V1Lease>(CoreTypes.Lease, ns, leaseName);
    assert.equal(lease.spec?.holderIdentity ?? '', '', 'the lease was released within the timeout too');
  });
});
