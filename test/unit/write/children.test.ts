// The children of a controller: made once under a fixed name, told from a namesake by the uid of
// their controller reference alone, deleted only by uid.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { ApiError } from '../../../src/runtime/client/errors.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { CoreTypes } from '../../../src/runtime/client/resource.ts';
import {
  createIfAbsent,
  deleteIfPresent,
  ensureChild,
  getOrUndefined,
  releaseFinishedJobPods,
} from '../../../src/runtime/write/children.ts';
import { controllerReference } from '../../../src/runtime/write/owner-refs.ts';
import { FakeApiServer } from '../../support/fake/api-server.ts';
import { asKubeClient, FakeClient } from '../../support/fake/client.ts';

const OWNER: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'owner', namespace: 'ns', uid: 'owner-uid' },
};
/** An earlier owner of the same name: a namesake, not the owner. */
const EARLIER: KubeObject = { ...OWNER, metadata: { ...OWNER.metadata, uid: 'earlier-uid' } };

function child(owner?: KubeObject): V1ConfigMap {
  return {
    metadata: {
      name: 'child',
      namespace: 'ns',
      ...(owner ? { ownerReferences: [controllerReference(owner, CoreTypes.ConfigMap)] } : {}),
    },
    data: { made: 'now' },
  };
}

function setup() {
  const server = new FakeApiServer();
  const fake = new FakeClient(server);
  return { server, fake, client: asKubeClient(fake) };
}

const summary = (fake: FakeClient) => fake.actions.map((a) => `${a.verb} ${a.kind} ${a.name}`);

describe('ensureChild', () => {
  it('creates the child when its name is free', async () => {
    const { fake, client } = setup();
    const made = await ensureChild(client, CoreTypes.ConfigMap, child(OWNER), OWNER);
    assert.equal(made.kind, 'created');
    assert.equal(made.kind === 'created' && made.obj.data?.made, 'now');
    assert.deepEqual(summary(fake), ['create ConfigMap child']);
  });

  it('on AlreadyExists reads the one there once: ours when the owner uid controls it', async () => {
    const { server, fake, client } = setup();
    server.seed(CoreTypes.ConfigMap, { ...child(OWNER), data: { made: 'before' } });
    const found = await ensureChild(client, CoreTypes.ConfigMap, child(OWNER), OWNER);
    assert.equal(found.kind, 'ours');
    assert.equal(
      found.kind === 'ours' && found.obj.data?.made,
      'before',
      'the object there, not the desired one',
    );
    assert.deepEqual(summary(fake), ['create ConfigMap child', 'get ConfigMap child']);
  });

  it('foreign: no controller, or an earlier owner of the same name (uid, not name)', async () => {
    for (const holder of [child(), child(EARLIER)]) {
      const { server, client } = setup();
      server.seed(CoreTypes.ConfigMap, holder);
      const found = await ensureChild(client, CoreTypes.ConfigMap, child(OWNER), OWNER);
      assert.equal(found.kind, 'foreign');
    }
  });

  it('absent: there for the create, gone for the read', async () => {
    const { fake, client } = setup();
    fake.fail({ verb: 'create' }, new ApiError(409, 'AlreadyExists', 'configmaps "child" already exists'));
    assert.deepEqual(await ensureChild(client, CoreTypes.ConfigMap, child(OWNER), OWNER), { kind: 'absent' });
  });

  it('refused: a create refused by admission (403) or invalid (422), with its error', async () => {
    for (const error of [
      new ApiError(403, 'Forbidden', 'exceeded quota'),
      new ApiError(422, 'Invalid', 'bad'),
    ]) {
      const { fake, client } = setup();
      fake.fail({ verb: 'create' }, error);
      const refused = await ensureChild(client, CoreTypes.ConfigMap, child(OWNER), OWNER);
      assert.equal(refused.kind, 'refused');
      assert.equal(refused.kind === 'refused' && (refused.error as ApiError).statusCode, error.statusCode);
    }
  });

  it('throws other errors of the create, and every error of the live read', async () => {
    const { server, fake, client } = setup();
    fake.fail({ verb: 'create' }, new ApiError(500, 'InternalError', 'etcd'), { times: 1 });
    await assert.rejects(ensureChild(client, CoreTypes.ConfigMap, child(OWNER), OWNER), { statusCode: 500 });
    server.seed(CoreTypes.ConfigMap, child(OWNER));
    fake.fail({ verb: 'get' }, new ApiError(403, 'Forbidden', 'no get'));
    await assert.rejects(ensureChild(client, CoreTypes.ConfigMap, child(OWNER), OWNER), { statusCode: 403 });
  });
});

describe('createIfAbsent', () => {
  it('is the object created, or undefined when the name is taken (no read)', async () => {
    const { fake, client } = setup();
    assert.ok(await createIfAbsent(client, CoreTypes.ConfigMap, child(OWNER)));
    assert.equal(await createIfAbsent(client, CoreTypes.ConfigMap, child(OWNER)), undefined);
    assert.deepEqual(summary(fake), ['create ConfigMap child', 'create ConfigMap child']);
  });
});

describe('getOrUndefined', () => {
  it('is the live object, or undefined on NotFound; other errors are thrown', async () => {
    const { server, fake, client } = setup();
    assert.equal(await getOrUndefined(client, CoreTypes.ConfigMap, 'ns', 'child'), undefined);
    server.seed(CoreTypes.ConfigMap, child(OWNER));
    assert.equal((await getOrUndefined(client, CoreTypes.ConfigMap, 'ns', 'child'))?.metadata?.name, 'child');
    fake.fail({ verb: 'get' }, new ApiError(403, 'Forbidden', 'no get'));
    await assert.rejects(getOrUndefined(client, CoreTypes.ConfigMap, 'ns', 'child'), { statusCode: 403 });
  });
});

describe('deleteIfPresent', () => {
  it('deletes this very object (uid precondition), with the propagation asked for only', async () => {
    const { server, fake, client } = setup();
    const [stored] = server.seed(CoreTypes.ConfigMap, child(OWNER));
    assert.equal(await deleteIfPresent(client, CoreTypes.ConfigMap, stored!), true);
    assert.deepEqual(fake.actions[0]?.body, { preconditions: { uid: stored!.metadata?.uid } });
    const other: V1ConfigMap = { metadata: { name: 'other', namespace: 'ns' } };
    const [again] = server.seed(CoreTypes.ConfigMap, other);
    await deleteIfPresent(client, CoreTypes.ConfigMap, again!, { propagationPolicy: 'Foreground' });
    assert.deepEqual(fake.actions[1]?.body, {
      propagationPolicy: 'Foreground',
      preconditions: { uid: again!.metadata?.uid },
    });
  });

  it('false when it is gone already; a namesake in its place (409) is thrown, and left alone', async () => {
    const { server, client } = setup();
    const gone: KubeObject = { metadata: { name: 'child', namespace: 'ns', uid: 'gone-uid' } };
    assert.equal(await deleteIfPresent(client, CoreTypes.ConfigMap, gone), false);
    server.seed(CoreTypes.ConfigMap, child(OWNER));
    await assert.rejects(deleteIfPresent(client, CoreTypes.ConfigMap, gone), { statusCode: 409 });
    assert.equal(server.get(CoreTypes.ConfigMap, 'ns', 'child').metadata?.deletionTimestamp, undefined);
  });
});

describe('releaseFinishedJobPods', () => {
  it('deletes each pod by uid in the background, but those already being deleted or gone', async () => {
    const { server, fake, client } = setup();
    const pod = (name: string): V1Pod => ({ metadata: { name, namespace: 'ns' } });
    const [done, deleting] = server.seed(CoreTypes.Pod, pod('done'), {
      ...pod('deleting'),
      metadata: { ...pod('deleting').metadata, finalizers: ['hold'], deletionTimestamp: new Date() },
    });
    const gone: V1Pod = { metadata: { name: 'gone', namespace: 'ns', uid: 'gone-uid' } };
    await releaseFinishedJobPods(client, [done!, deleting!, gone]);
    assert.deepEqual(
      fake.writes().map((a) => [a.name, a.body]),
      [
        ['done', { propagationPolicy: 'Background', preconditions: { uid: done!.metadata?.uid } }],
        ['gone', { propagationPolicy: 'Background', preconditions: { uid: 'gone-uid' } }],
      ],
    );
  });
});
