import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dashboardQueries, substitute, vectorSelectors } from '../../integration/dashboard/queries.ts';

describe('dashboard queries', () => {
  it('finds every target of the chart dashboard, each with a panel title', () => {
    const queries = dashboardQueries();
    assert.ok(queries.length > 10);
    for (const q of queries) assert.ok(q.panel && q.refId && q.expr, JSON.stringify(q));
  });

  it("replaces Grafana's variables as Grafana sends them", () => {
    assert.equal(
      substitute('rate(x{job=~"$job", instance=~"$instance"}[$__rate_interval])', {
        job: 'j',
        rateInterval: '10s',
      }),
      'rate(x{job=~"j", instance=~".*"}[10s])',
    );
  });

  it('takes the vector selectors out of an expression', () => {
    assert.deepEqual(
      vectorSelectors(
        'sum by (controller) (rate(controller_runtime_reconcile_errors_total{job="a"}[5m])) > 0 ' +
          'and on (controller) histogram_quantile(0.99, sum by (le) (rate(workqueue_queue_duration_seconds_bucket[5m]))) > 1 ' +
          'or absent(leader_election_master_status) unless max without (instance) (up) offset 5m',
      ),
      [
        'controller_runtime_reconcile_errors_total{job="a"}',
        'workqueue_queue_duration_seconds_bucket',
        'leader_election_master_status',
      ],
    );
  });
});
