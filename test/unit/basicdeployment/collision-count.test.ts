import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BASIC_DEPLOYMENT, type BasicDeployment } from '../../../src/apis/index.ts';
import { CollisionCounts } from '../../../src/controllers/basicdeployment/collision-count.ts';

function deployment(uid: string, collisionCount?: number): BasicDeployment {
  return {
    apiVersion: BASIC_DEPLOYMENT.apiVersion,
    kind: BASIC_DEPLOYMENT.kind,
    metadata: { name: 'web', namespace: 'ns', uid },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'a', image: 'i' }] } },
    },
    status: collisionCount === undefined ? {} : { collisionCount },
  };
}

describe('CollisionCounts', () => {
  it('is undefined until a collision happens, then the stored count', () => {
    const counts = new CollisionCounts();
    assert.equal(counts.current(deployment('a')), undefined);
    assert.equal(counts.current(deployment('a', 2)), 2);
  });
  it('a bump survives a stale cached copy: the count never goes back down', () => {
    const counts = new CollisionCounts();
    assert.equal(counts.bump(deployment('a'), 0), 1);
    assert.equal(counts.current(deployment('a')), 1, 'the cache has not seen the write yet');
    assert.equal(counts.current(deployment('a', 0)), 1);
    assert.equal(counts.current(deployment('a', 3)), 3, 'a higher stored count wins');
    assert.equal(counts.bump(deployment('a', 3), 3), 4);
  });
  it('forgets a bump of a deleted deployment and ignores it for a new one of the same name', () => {
    const counts = new CollisionCounts();
    counts.bump(deployment('a'), 4);
    assert.equal(counts.current(deployment('b')), undefined, 'another uid');
    counts.forget('ns/web');
    assert.equal(counts.current(deployment('a')), undefined);
  });
});
