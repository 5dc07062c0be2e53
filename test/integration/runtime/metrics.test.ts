import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { testClient } from '../../../e2e/support/cluster.ts';
import { httpGet } from '../../../e2e/support/http.ts';
import { createNamespace, deleteNamespace } from '../../../e2e/support/namespace.ts';
import { find, parseMetrics, value } from '../../../e2e/support/prometheus-text.ts';
import { waitFor } from '../../../e2e/support/wait.ts';
import type { KubeClient } from '../../../src/runtime/client/kube-client.ts';
import { CoreTypes, type ResourceType } from '../../../src/runtime/client/resource.ts';
import { TerminalError } from '../../../src/runtime/controller/reconciler.ts';
import type { Manager } from '../../../src/runtime/manager/manager.ts';
import { startTestManager, TEST_CONTROLLERS_USER_AGENT } from '../../support/manager.ts';

const CONTROLLER = 'metrics-probe';

const configMap = (namespace: string, name: string): V1ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, labels: { test: 'metrics' } },
});

/** A resource the API server does not serve: listing it fails with 404 forever, so it never syncs. */
const MISSING_TYPE: ResourceType = {
  group: 'missing.basicoperator.dev',
  version: 'v1',
  kind: 'Missing',
  plural: 'missings',
  namespaced: true,
};

describe('metrics and health endpoints of a manager', () => {
  let client: KubeClient;
  let ns: string;
  const managers: Manager[] = [];

  before(async () => {
    client = await testClient();
    ns = await createNamespace(client, 'metrics');
  });
  after(async () => {
    await Promise.all(managers.map((m) => m.stop()));
    await deleteNamespace(client, ns);
  });

  it('counts successes, retried errors and terminal errors under controller-runtime names', {
    timeout: 60_000,
  }, async () => {
    const outcomes: string[] = [];
    let flakyAttempts = 0;
    const leaseName = `metrics-${randomBytes(3).toString('hex')}`;
    const manager = await startTestManager(
      [ns],
      (m) => {
        m.controller(CONTROLLER)
          .for(CoreTypes.ConfigMap, {
            create: (cm) => cm.metadata?.labels?.test === 'metrics',
            update: () => false,
            delete: () => false,
          })
          .complete({
            async reconcile(request) {
              if (request.name === 'terminal') {
                outcomes.push('terminal');
                throw new TerminalError('this object can never be reconciled');
              }
              if (request.name === 'flaky' && ++flakyAttempts === 1) {
                outcomes.push('flaky-error');
                throw new Error('transient trouble');
              }
              outcomes.push(`ok:${request.name}`);
              return undefined;
            },
          });
      },
      [
        '--leader-elect',
        '--leader-election-namespace',
        ns,
        '--leader-election-id',
        leaseName,
        '--kube-api-qps',
        '50',
      ],
      { userAgent: TEST_CONTROLLERS_USER_AGENT },
    );
    managers.push(manager);
    const { metrics, health } = manager.ports;
    assert.ok(metrics && health);

    for (const name of ['ok-0', 'ok-1', 'ok-2', 'flaky', 'terminal']) {
      await client.create(CoreTypes.ConfigMap, configMap(ns, name));
    }
    await waitFor('every reconcile outcome', () =>
      ['ok:ok-0', 'ok:ok-1', 'ok:ok-2', 'flaky-error', 'ok:flaky', 'terminal'].every((o) =>
        outcomes.includes(o),
      ),
    );
    const c = { controller: CONTROLLER };
    const q = { name: CONTROLLER };
    // Counted after its reconcile returns, with whatever that reconcile scheduled.
    const samples = await waitFor('the terminal error counted, nothing queued or running', async () => {
      const response = await httpGet(metrics, '/metrics');
      assert.equal(response.status, 200);
      const now = parseMetrics(response.body);
      return value(now, 'controller_runtime_terminal_reconcile_errors_total', c) > 0 &&
        value(now, 'controller_runtime_active_workers', c) === 0 &&
        value(now, 'workqueue_depth', q) === 0
        ? now
        : undefined;
    });
    assert.ok(value(samples, 'controller_runtime_reconcile_total', { ...c, result: 'success' }) >= 4);
    assert.ok(value(samples, 'controller_runtime_reconcile_total', { ...c, result: 'error' }) >= 2);
    assert.ok(value(samples, 'controller_runtime_reconcile_errors_total', c) >= 2);
    assert.equal(value(samples, 'controller_runtime_terminal_reconcile_errors_total', c), 1);
    assert.ok(value(samples, 'controller_runtime_reconcile_time_seconds_count', c) >= 6);
    assert.ok(find(samples, 'controller_runtime_reconcile_time_seconds_bucket', c).length > 10);
    assert.equal(value(samples, 'controller_runtime_max_concurrent_reconciles', c), 20); // the default
    assert.equal(value(samples, 'controller_runtime_active_workers', c), 0);
    assert.equal(value(samples, 'workqueue_depth', q), 0);
    assert.ok(value(samples, 'workqueue_adds_total', q) >= 6);
    assert.ok(value(samples, 'workqueue_queue_duration_seconds_count', q) >= 6);
    assert.ok(value(samples, 'workqueue_work_duration_seconds_count', q) >= 6);
    assert.equal(value(samples, 'workqueue_retries_total', q), 1, 'the error retried, the terminal one not');
    assert.ok(find(samples, 'workqueue_unfinished_work_seconds', q).length === 1);
    assert.ok(find(samples, 'workqueue_longest_running_processor_seconds', q).length === 1);
    assert.equal(value(samples, 'leader_election_master_status', { name: leaseName }), 1);
    assert.ok(find(samples, 'process_cpu_user_seconds_total').length === 1, 'default process metrics');
    // The client: requests by code and method, time spent in the rate limit, and who waits for it.
    assert.ok(value(samples, 'rest_client_requests_total', { method: 'GET', code: '200' }) >= 1, 'lists');
    assert.ok(
      value(samples, 'rest_client_requests_total', { method: 'POST', code: '201' }) >= 1,
      'the Lease',
    );
    assert.ok(value(samples, 'rest_client_rate_limiter_duration_seconds_count', { verb: 'GET' }) >= 1);
    assert.equal(find(samples, 'basic_operator_client_throttle_waiting').length, 2, 'one series per lane');

    assert.equal((await httpGet(health, '/healthz')).status, 200);
    const ready = await httpGet(health, '/readyz');
    assert.equal(ready.status, 200, ready.body);
    assert.equal((await httpGet(health, '/nope')).status, 404);
  });

  it('is not ready while an informer cannot sync, and names it', { timeout: 60_000 }, async () => {
    const manager = await startTestManager(
      [ns],
      (m) => {
        m.controller('never-synced')
          .for(MISSING_TYPE)
          .complete({ reconcile: async () => undefined });
      },
      [],
      { userAgent: TEST_CONTROLLERS_USER_AGENT },
    );
    managers.push(manager);
    const health = manager.ports.health!;
    const informer = manager.cache.informerFor(MISSING_TYPE);
    await waitFor('the list of the missing type to fail', () => informer.reflectors[0]!.stats.errors >= 1, {
      timeoutMs: 10_000,
    });
    const ready = await httpGet(health, '/readyz');
    assert.equal(ready.status, 503);
    assert.match(ready.body, /not ready: caches not synced: missings\.v1\.missing\.basicoperator\.dev/);
    assert.equal((await httpGet(health, '/healthz')).status, 200, 'alive while not ready');
    assert.equal(manager.isLeader, false, 'controllers wait for the caches');
  });
});
