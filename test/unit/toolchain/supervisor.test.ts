import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMPONENTS, type Component } from '../../../e2e/providers/local/components.ts';
import {
  BACKOFF_MAX_MS,
  BACKOFF_RESET_MS,
  BACKOFF_START_MS,
  componentsToStart,
  describeExits,
  exitReason,
  nextRestartAllowedAt,
  type RestartHistory,
} from '../../../e2e/providers/local/supervisor.ts';

const none = new Map<Component, RestartHistory>();

describe("the local control plane's supervisor: what it starts again", () => {
  it('a component that exited on its own, at once the first time', () => {
    assert.deepEqual(componentsToStart(['kube-controller-manager'], [], none, 1_000), [
      'kube-controller-manager',
    ]);
    assert.deepEqual(componentsToStart(['kube-controller-manager', 'kube-scheduler'], [], none, 1_000), [
      'kube-controller-manager',
      'kube-scheduler',
    ]);
  });

  it('nothing while every component is stopped: the cluster was stopped, not crashed', () => {
    assert.deepEqual(componentsToStart([...COMPONENTS], [], none, 1_000), []);
  });

  it('nothing while a stopped component is held by a test, even beside one that crashed', () => {
    assert.deepEqual(componentsToStart(['kube-apiserver'], ['kube-apiserver'], none, 1_000), []);
    assert.deepEqual(
      componentsToStart(['kube-apiserver', 'kube-scheduler'], ['kube-apiserver'], none, 1_000),
      [],
      'starting the cluster would start the held API server too',
    );
    assert.deepEqual(
      componentsToStart(['kube-scheduler'], ['kube-apiserver'], none, 1_000),
      ['kube-scheduler'],
      'a hold on a running component changes nothing',
    );
  });

  it('backs off as kubelet does: 10 s doubling to 5 min, so a component that cannot run never loops hot', () => {
    const at = (count: number) => nextRestartAllowedAt({ count, lastAt: 0 });
    assert.equal(nextRestartAllowedAt(undefined), 0);
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7, 20].map(at),
      [10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000],
    );
    assert.equal(at(1), BACKOFF_START_MS);
    assert.equal(at(50), BACKOFF_MAX_MS);
    const history = new Map<Component, RestartHistory>([['kube-scheduler', { count: 2, lastAt: 100_000 }]]);
    assert.deepEqual(componentsToStart(['kube-scheduler'], [], history, 119_999), []);
    assert.deepEqual(componentsToStart(['kube-scheduler'], [], history, 120_000), ['kube-scheduler']);
    assert.ok(
      BACKOFF_RESET_MS > BACKOFF_MAX_MS,
      'a component forgiven only after it ran longer than the longest wait',
    );
  });

  it('says which components it started again, or that none exited', () => {
    assert.equal(describeExits([]), 'no component exited on its own');
    const line = describeExits([
      { component: 'kube-controller-manager', foundAt: new Date('2026-11-28T05:14:39Z'), lastLog: 'lost' },
      { component: 'kube-scheduler', foundAt: new Date('2026-11-28T05:14:45Z'), lastLog: 'lost' },
    ]);
    assert.match(
      line,
      /kube-controller-manager at 2026-11-28T05:14:39.000Z, kube-scheduler at 2026-11-28T05:14:45/,
    );
  });
});

describe('why a component exited, from the end of its log', () => {
  it('the lost lease, though shutdown lines follow it', () => {
    const log = [
      'E1128 05:14:37.976603   11446 leaderelection.go:461] "Error retrieving lease lock"',
      'E1128 05:14:37.976911   11446 controllermanager.go:413] "leaderelection lost/stopped"',
      'I1128 05:14:38.534429   11446 resource_quota_controller.go:285] "resource quota controller worker shutting down"',
      'I1128 05:14:38.534437   11446 resource_quota_controller.go:285] "resource quota controller worker shutting down"',
      'I1128 05:14:38.534446   11446 resource_quota_controller.go:285] "resource quota controller worker shutting down"',
      '',
    ].join('\n');
    assert.match(exitReason(log), /controllermanager.go:413\] "leaderelection lost\/stopped"$/);
  });

  it("klog's fatal line or a panic", () => {
    assert.match(
      exitReason('I1128 x] fine\nF1128 06:00:00 server.go:1] unable to load config\nI1128 y] after'),
      /^F1128 .*unable to load config/,
    );
    assert.match(
      exitReason('I1128 x] fine\npanic: runtime error: nil map\n\ngoroutine 1'),
      /^panic: runtime error/,
    );
  });

  it('otherwise its last three lines, cut to 600 characters', () => {
    assert.equal(exitReason('a\nb\nc\nd\n'), 'b | c | d');
    assert.equal(exitReason('\n'), 'its log is empty', 'killed before it wrote a line');
    assert.equal(exitReason(`${'x'.repeat(700)}\n`).length, 603);
  });
});
