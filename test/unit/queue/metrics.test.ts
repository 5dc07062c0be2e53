import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Counter, Registry } from 'prom-client';
import { FakeClock } from '../../../src/runtime/queue/clock.ts';
import { createPrometheusQueueMetrics, WORKQUEUE_METRIC_NAMES } from '../../../src/runtime/queue/metrics.ts';
import { ItemExponentialFailureRateLimiter } from '../../../src/runtime/queue/rate-limiters.ts';
import { WorkQueue } from '../../../src/runtime/queue/work-queue.ts';

type Labels = Record<string, string | number | undefined>;

/** The value of `metricName` (or of a histogram's `_count`/`_sum`/`_bucket` series) for `labels`. */
async function readValue(registry: Registry, metricName: string, labels: Labels, seriesName?: string) {
  const metrics = await registry.getMetricsAsJSON();
  const metric = metrics.find((m) => m.name === metricName);
  assert.ok(metric, `${metricName} is registered`);
  const matches = metric.values.filter(
    (v) =>
      (seriesName === undefined || ('metricName' in v && v.metricName === seriesName)) &&
      Object.entries(labels).every(([key, value]) => v.labels[key] === value),
  );
  assert.equal(matches.length, 1, `one ${seriesName ?? metricName} series for ${JSON.stringify(labels)}`);
  return matches[0]!.value;
}

const controller = (name: string) => ({ name, controller: name });

function newInstrumentedQueue(registry: Registry, name: string, clock: FakeClock): WorkQueue {
  return new WorkQueue({
    clock,
    metrics: createPrometheusQueueMetrics(registry, name, clock),
    rateLimiter: new ItemExponentialFailureRateLimiter(5, 1000),
  });
}

describe('createPrometheusQueueMetrics', () => {
  it('registers the controller-runtime workqueue metric names with name and controller labels', async () => {
    const registry = new Registry();
    createPrometheusQueueMetrics(registry, 'basicdeployment', new FakeClock());
    const metrics = await registry.getMetricsAsJSON();
    assert.deepEqual(metrics.map((m) => m.name).sort(), Object.values(WORKQUEUE_METRIC_NAMES).sort());
    const types = Object.fromEntries(metrics.map((m) => [m.name, m.type]));
    assert.deepEqual(types, {
      workqueue_depth: 'gauge',
      workqueue_adds_total: 'counter',
      workqueue_queue_duration_seconds: 'histogram',
      workqueue_work_duration_seconds: 'histogram',
      workqueue_unfinished_work_seconds: 'gauge',
      workqueue_longest_running_processor_seconds: 'gauge',
      workqueue_retries_total: 'counter',
    });
    for (const metric of metrics) {
      assert.ok(metric.values.length > 0, `${metric.name} has a series before any work`);
      for (const value of metric.values) {
        assert.equal(value.labels.name, 'basicdeployment');
        assert.equal(value.labels.controller, 'basicdeployment');
      }
    }
  });

  it('uses client-go duration buckets from 10 ns to 10 s', async () => {
    const registry = new Registry();
    createPrometheusQueueMetrics(registry, 'q', new FakeClock());
    const text = await registry.getSingleMetricAsString(WORKQUEUE_METRIC_NAMES.queueDuration);
    const buckets = [...text.matchAll(/le="([^"]+)"/g)].map((match) => match[1]);
    assert.deepEqual(buckets, [
      '1e-8',
      '1e-7',
      '0.000001',
      '0.00001',
      '0.0001',
      '0.001',
      '0.01',
      '0.1',
      '1',
      '10',
      '+Inf',
    ]);
  });

  it('reports depth, adds, retries and durations after a scripted sequence', async () => {
    const registry = new Registry();
    const clock = new FakeClock();
    const queue = newInstrumentedQueue(registry, 'machine', clock);
    const labels = controller('machine');

    queue.add('a');
    queue.add('b');
    queue.add('a'); // de-duplicated: not an add
    assert.equal(await readValue(registry, 'workqueue_adds_total', labels), 2);
    assert.equal(await readValue(registry, 'workqueue_depth', labels), 2);

    clock.advance(10);
    assert.equal(await queue.get(), 'a');
    assert.equal(await readValue(registry, 'workqueue_depth', labels), 1);
    assert.equal(
      await readValue(
        registry,
        'workqueue_queue_duration_seconds',
        labels,
        'workqueue_queue_duration_seconds_sum',
      ),
      0.01,
    );

    queue.add('a'); // dirty again while in flight: counted, waits for done()
    queue.addRateLimited('b');
    queue.addAfter('c', 100);
    assert.equal(await readValue(registry, 'workqueue_adds_total', labels), 3);
    assert.equal(await readValue(registry, 'workqueue_depth', labels), 2);
    assert.equal(await readValue(registry, 'workqueue_retries_total', labels), 2);

    clock.advance(30); // b's rate-limited add fires but b is already queued
    assert.equal(await readValue(registry, 'workqueue_adds_total', labels), 3);
    assert.equal(await readValue(registry, 'workqueue_unfinished_work_seconds', labels), 0.03);
    assert.equal(await readValue(registry, 'workqueue_longest_running_processor_seconds', labels), 0.03);

    queue.done('a');
    assert.equal(await readValue(registry, 'workqueue_unfinished_work_seconds', labels), 0);
    assert.equal(await readValue(registry, 'workqueue_longest_running_processor_seconds', labels), 0);
    assert.equal(
      await readValue(
        registry,
        'workqueue_work_duration_seconds',
        labels,
        'workqueue_work_duration_seconds_count',
      ),
      1,
    );
    assert.equal(
      await readValue(
        registry,
        'workqueue_work_duration_seconds',
        labels,
        'workqueue_work_duration_seconds_sum',
      ),
      0.03,
    );

    clock.advance(100); // c arrives
    assert.equal(await readValue(registry, 'workqueue_adds_total', labels), 4);
    assert.equal(await readValue(registry, 'workqueue_depth', labels), 3);
    queue.shutDown();
  });

  it('sums the in-progress time of every worker and reports the oldest', async () => {
    const registry = new Registry();
    const clock = new FakeClock();
    const queue = newInstrumentedQueue(registry, 'q', clock);
    queue.add('a');
    queue.add('b');
    await queue.get();
    clock.advance(1000);
    await queue.get();
    clock.advance(500);
    assert.equal(await readValue(registry, 'workqueue_unfinished_work_seconds', controller('q')), 2);
    assert.equal(
      await readValue(registry, 'workqueue_longest_running_processor_seconds', controller('q')),
      1.5,
    );
  });

  it('shares one set of metric families between queues on the same registry', async () => {
    const registry = new Registry();
    const clock = new FakeClock();
    const first = newInstrumentedQueue(registry, 'basicdeployment', clock);
    const second = newInstrumentedQueue(registry, 'basicreplicaset', clock);
    first.add('x');
    second.add('y');
    second.add('z');
    assert.equal(await readValue(registry, 'workqueue_adds_total', controller('basicdeployment')), 1);
    assert.equal(await readValue(registry, 'workqueue_adds_total', controller('basicreplicaset')), 2);

    // A restarted controller gets the same series back instead of a "metric already registered" error.
    const restarted = newInstrumentedQueue(registry, 'basicdeployment', clock);
    restarted.add('w');
    assert.equal(await readValue(registry, 'workqueue_adds_total', controller('basicdeployment')), 2);
  });

  it('refuses a registry where other code registered a workqueue metric name', () => {
    const registry = new Registry();
    new Counter({ name: 'workqueue_adds_total', help: 'someone else', registers: [registry] });
    assert.throws(() => createPrometheusQueueMetrics(registry, 'q'), /already registered/);
  });
});
