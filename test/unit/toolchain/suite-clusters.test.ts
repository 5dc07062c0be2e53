import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clustersToStop, describeClusterEnd, type SuiteCluster } from '../../../scripts/test-all/clusters.ts';

const cluster = (name: string, runningBefore: boolean, broughtUp = true): SuiteCluster => ({
  name,
  runningBefore,
  broughtUp,
});

describe('the clusters npm test stops when it ends', () => {
  it('stops the clusters it started and leaves the ones that were running before it', () => {
    const local = cluster('local basic-operator', false);
    const kind = cluster('kind basic-operator', true);
    assert.deepEqual(clustersToStop([local, kind]), [local]);
    assert.equal(
      describeClusterEnd([local, kind]),
      'clusters: stopping local basic-operator (this run started it); leaving kind basic-operator running (it was running before this run)',
    );
  });

  it('leaves alone a cluster it did not bring up, running or not (kind skipped)', () => {
    const clusters = [cluster('local basic-operator', false), cluster('kind basic-operator', true, false)];
    assert.deepEqual(
      clustersToStop(clusters).map((c) => c.name),
      ['local basic-operator'],
    );
    assert.equal(
      describeClusterEnd(clusters),
      'clusters: stopping local basic-operator (this run started it)',
    );
  });

  it('names every cluster in one line', () => {
    const started = [cluster('local basic-operator', false), cluster('kind basic-operator', false)];
    assert.equal(
      describeClusterEnd(started),
      'clusters: stopping local basic-operator and kind basic-operator (this run started them)',
    );
    const developers = [cluster('local basic-operator', true), cluster('kind basic-operator', true)];
    assert.deepEqual(clustersToStop(developers), []);
    assert.equal(
      describeClusterEnd(developers),
      'clusters: leaving local basic-operator and kind basic-operator running (they were running before this run)',
    );
    assert.equal(
      describeClusterEnd([cluster('kind basic-operator', false, false)]),
      'clusters: none brought up',
    );
  });
});
