import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chartMemoryLimit, parseMemory } from '../../../bench/measure/memory-cgroup.ts';
import { perSecond, rate } from '../../../bench/measure/pod-creates.ts';
import { queueTimes } from '../../../bench/measure/queue-times.ts';
import { kcmStartupFromLog } from '../../../bench/measure/startup.ts';
import { median, percentile } from '../../../bench/measure/stats.ts';
import { imageNodeFlags } from '../../../e2e/support/image-node-flags.ts';

describe('the benchmark measures', () => {
  it('queue times: items, mean wait and mean work per queue between two scrapes, by name or controller label', () => {
    const scrape = (n: number, waitS: number, workS: number) =>
      [
        `workqueue_queue_duration_seconds_sum{name="deployment"} ${waitS}`,
        `workqueue_queue_duration_seconds_count{name="deployment"} ${n}`,
        `workqueue_work_duration_seconds_sum{name="deployment"} ${workS}`,
        `workqueue_work_duration_seconds_count{name="deployment"} ${n}`,
        'workqueue_work_duration_seconds_count{name="other"} 99',
        `workqueue_work_duration_seconds_bucket{name="deployment",le="1"} ${n}`,
        `workqueue_work_duration_seconds_count{controller="basicreplicaset",name="basicreplicaset"} ${2 * n}`,
        `workqueue_work_duration_seconds_sum{controller="basicreplicaset",name="basicreplicaset"} ${workS}`,
      ].join('\n');
    const times = queueTimes(scrape(10, 1, 2), scrape(60, 1.1, 2.5), [
      'deployment',
      'basicreplicaset',
      'absent',
    ]);
    assert.deepEqual(times.deployment?.items, 50);
    assert.ok(Math.abs((times.deployment?.waitMs ?? 0) - 2) < 1e-9, 'wait: 0.1 s over 50 items');
    assert.ok(Math.abs((times.deployment?.workMs ?? 0) - 10) < 1e-9, 'work: 0.5 s over 50 items');
    assert.equal(times.basicreplicaset?.items, 100);
    assert.deepEqual(times.absent, { items: 0, waitMs: 0, workMs: 0 });
  });

  it('percentiles by nearest rank', () => {
    const values = Array.from({ length: 50 }, (_, i) => i + 1);
    assert.equal(percentile(values, 50), 25);
    assert.equal(percentile(values, 99), 50);
    assert.equal(percentile([7], 99), 7);
    assert.ok(Number.isNaN(percentile([], 50)));
    assert.equal(median([3, 1, 2]), 2);
  });

  it('pods per second and their timeline', () => {
    assert.equal(rate([1000, 1500, 2000]), 2);
    assert.equal(rate([1000]), 0);
    assert.deepEqual(perSecond([1000, 1100, 2500, 3999], 1000), [2, 1, 1]);
  });

  it("kube-controller-manager's start from its log: lease, then the last cache of those it waited for", () => {
    const day = new Date();
    const md = `${String(day.getMonth() + 1).padStart(2, '0')}${String(day.getDate()).padStart(2, '0')}`;
    const at = (time: string) => {
      const [h, m, s] = time.split(':').map(Number) as [number, number, number];
      return new Date(
        day.getFullYear(),
        day.getMonth(),
        day.getDate(),
        h,
        m,
        Math.floor(s),
        (s % 1) * 1000,
      ).getTime();
    };
    const lines = [
      `I${md} 03:26:00.000000   15000 leaderelection.go:272] "Successfully acquired lease" lock="kube-system/kube-controller-manager"`,
      `I${md} 03:26:14.406634   15107 leaderelection.go:272] "Successfully acquired lease" lock="kube-system/kube-controller-manager"`,
      `I${md} 03:26:14.463807   15107 shared_informer.go:402] "Waiting for caches to sync"`,
      `I${md} 03:26:14.463895   15107 shared_informer.go:402] "Waiting for caches to sync"`,
      `I${md} 03:26:14.564029   15107 shared_informer.go:409] "Caches are synced"`,
    ];
    const started = at('03:26:00.5');
    assert.equal(kcmStartupFromLog(lines, 15107, started), undefined, 'one cache still syncing');
    const done = [...lines, `I${md} 03:26:14.906634   15107 shared_informer.go:409] "Caches are synced"`];
    const startup = kcmStartupFromLog(done, 15107, started);
    assert.ok(startup);
    assert.ok(Math.abs(startup.leaseMs - 13_906.634) < 1, `lease after ${startup.leaseMs} ms`);
    assert.ok(
      Math.abs(startup.cachesSyncedAfterLeaseMs - 500) < 1,
      `synced ${startup.cachesSyncedAfterLeaseMs} ms later`,
    );
    assert.equal(kcmStartupFromLog(done, 99, started), undefined, "another process's lines do not count");
  });

  it('memory quantities and the chart default limit', () => {
    assert.equal(parseMemory('512Mi'), 512 * 1048576);
    assert.equal(parseMemory('1Gi'), 1024 ** 3);
    assert.equal(parseMemory('300M'), 300e6);
    assert.throws(() => parseMemory('lots'), /not a memory quantity/);
    assert.match(chartMemoryLimit(), /^\d+(Mi|Gi)$/);
  });

  it("the operator's Node flags come from the image's ENTRYPOINT", () => {
    const flags = imageNodeFlags();
    assert.ok(flags.includes('--max-old-space-size-percentage=60'), flags.join(' '));
    assert.ok(flags.every((f) => f.startsWith('--')));
  });
});
