import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BASIC_DEPLOYMENT, type BasicDeployment, REVISION_ANNOTATION } from '../../../src/apis/index.ts';
import { RevisionWriter } from '../../../src/controllers/basicdeployment/revision-writer.ts';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import { FakeCluster } from '../../support/fake/cluster.ts';

function deployment(): BasicDeployment {
  return {
    apiVersion: BASIC_DEPLOYMENT.apiVersion,
    kind: BASIC_DEPLOYMENT.kind,
    metadata: { name: 'web', namespace: 'ns', uid: 'uid-web' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'a', image: 'a' }] } },
    },
  };
}

function setup() {
  const cluster = new FakeCluster();
  const [seeded] = cluster.seed(BASIC_DEPLOYMENT, deployment());
  const failed: string[] = [];
  const writer = new RevisionWriter({ client: cluster.kubeClient, onError: (key) => failed.push(key) });
  const annotation = () =>
    cluster.server.get(BASIC_DEPLOYMENT, 'ns', 'web').metadata.annotations?.[REVISION_ANNOTATION];
  return { cluster, cached: seeded!, writer, failed, annotation, signal: new AbortController().signal };
}

describe('RevisionWriter', () => {
  it('writes the revision in the low lane of the rate limit, behind the creates it reports', async () => {
    const { cluster, cached, writer, annotation, signal } = setup();
    writer.record(cached, '1', signal);
    await writer.drain();
    assert.equal(annotation(), '1');
    assert.deepEqual(
      cluster.client.writes().map((w) => [w.verb, w.kind, w.priority]),
      [['patch', 'BasicDeployment', 'low']],
    );
  });

  it('sends one write for a revision handed over again, waiting or not yet in the cache', async () => {
    const { cluster, cached, writer, signal } = setup();
    writer.record(cached, '1', signal);
    writer.record(cached, '1', signal);
    await writer.drain();
    // The cache still shows the deployment from before the write.
    writer.record(cached, '1', signal);
    await writer.drain();
    assert.equal(cluster.client.writes().length, 1);
  });

  it('a newer revision handed over while one is written goes after it, so the newest lands last', async () => {
    const { cluster, cached, writer, annotation, signal } = setup();
    writer.record(cached, '1', signal);
    writer.record(cached, '2', signal);
    writer.record(cached, '3', signal);
    await writer.drain();
    assert.equal(annotation(), '3');
    assert.deepEqual(
      cluster.client.writes().map((w) => JSON.stringify(w.body)),
      ['1', '3'].map((r) => JSON.stringify({ metadata: { annotations: { [REVISION_ANNOTATION]: r } } })),
      '2 waited behind 1 and was replaced by 3',
    );
  });

  it('a failed write asks for a reconcile, and the same revision handed over again is sent again', async () => {
    const { cluster, cached, writer, failed, annotation, signal } = setup();
    cluster.client.fail({ verb: 'patch' }, new ApiError(500, 'InternalError', 'etcd timeout'), { times: 1 });
    writer.record(cached, '1', signal);
    await writer.drain();
    assert.deepEqual(failed, ['ns/web']);
    writer.record(cached, '1', signal);
    await writer.drain();
    assert.equal(annotation(), '1');
  });

  it('writes nothing when the deployment already has the revision, or its controller stopped', async () => {
    const { cluster, cached, writer, signal } = setup();
    writer.record(
      { ...cached, metadata: { ...cached.metadata, annotations: { [REVISION_ANNOTATION]: '3' } } },
      '3',
      signal,
    );
    const stopped = new AbortController();
    stopped.abort();
    writer.record(cached, '1', stopped.signal);
    await writer.drain();
    assert.deepEqual(cluster.client.writes(), []);
    // A later reconcile of a new leader hands it over again: it is no longer counted as waiting.
    writer.record(cached, '1', signal);
    await writer.drain();
    assert.equal(cluster.client.writes().length, 1);
  });
});
