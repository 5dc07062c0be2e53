// basic_operator_reconciles_total: a controller's reconciles by the reconciled object's namespace,
// beside controller-runtime's reconcile_total, which stays per controller only.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { waitFor } from '../../../e2e/support/wait.ts';
import { Controller } from '../../../src/runtime/controller/controller.ts';
import { type Request, type Result, TerminalError } from '../../../src/runtime/controller/reconciler.ts';
import { testLogger } from '../../support/log.ts';

/** The reconcile each object's name asks for. */
function outcome(request: Request): Result | undefined {
  if (request.name === 'fails') throw new TerminalError('refused');
  if (request.name === 'later') return { requeueAfterMs: 60_000 };
  return undefined;
}

describe('basic_operator_reconciles_total', () => {
  const registry = new Registry();
  const done: string[] = [];
  const controller = new Controller(
    { name: 'ns-count', concurrency: 2, drainTimeoutMs: 100 },
    {
      reconcile: async (request: Request) => {
        try {
          return outcome(request);
        } finally {
          done.push(`${request.namespace}/${request.name}`);
        }
      },
    },
    registry,
    testLogger(),
  );
  after(() => controller.stop({ abortInFlight: true }));

  const sample = async (labels: string): Promise<number | undefined> => {
    const text = await registry.getSingleMetricAsString('basic_operator_reconciles_total');
    const line = text.split('\n').find((l) => l.startsWith(`basic_operator_reconciles_total{${labels}} `));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  };

  it('has no series before a reconcile: the namespaces are not known yet', async () => {
    assert.equal(await sample('controller="ns-count",object_namespace="team-a",result="success"'), undefined);
  });

  it('counts each result by the object namespace, every result of a namespace from its first reconcile', async () => {
    controller.start();
    const requests: Request[] = [
      { namespace: 'team-a', name: 'ok' },
      { namespace: 'team-a', name: 'later' },
      { namespace: 'team-b', name: 'fails' },
      { namespace: '', name: 'cluster-scoped' },
    ];
    for (const request of requests) controller.enqueue(request);
    // Counted as the reconcile returns, in the same turn of the event loop as the last `done`.
    await waitFor('the reconciles', () => done.length === requests.length, {
      timeoutMs: 5000,
      intervalMs: 5,
    });
    const count = (namespace: string, result: string) =>
      sample(`controller="ns-count",object_namespace="${namespace}",result="${result}"`);
    assert.deepEqual(
      await Promise.all(['success', 'error', 'requeue', 'requeue_after'].map((r) => count('team-a', r))),
      [1, 0, 0, 1],
    );
    assert.deepEqual(
      await Promise.all(['success', 'error', 'requeue', 'requeue_after'].map((r) => count('team-b', r))),
      [0, 1, 0, 0],
    );
    assert.equal(await count('', 'error'), 0);
    // controller-runtime's series keep their labels: the sum over every namespace.
    const total = await registry.getSingleMetricAsString('controller_runtime_reconcile_total');
    assert.match(total, /^controller_runtime_reconcile_total\{controller="ns-count",result="success"\} 2$/m);
    assert.match(total, /^controller_runtime_reconcile_total\{controller="ns-count",result="error"\} 1$/m);
    assert.doesNotMatch(total, /namespace/);
  });
});
