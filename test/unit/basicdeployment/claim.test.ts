import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BASIC_DEPLOYMENT,
  BASIC_REPLICA_SET,
  type BasicDeployment,
  type BasicReplicaSet,
} from '../../../src/apis/index.ts';
import {
  type ClaimOperations,
  claimSets,
  deploymentsForOrphan,
} from '../../../src/controllers/basicdeployment/claim.ts';

function deployment(
  name = 'web',
  uid = 'd-uid',
  extra: Partial<BasicDeployment['metadata']> = {},
): BasicDeployment {
  return {
    apiVersion: BASIC_DEPLOYMENT.apiVersion,
    kind: BASIC_DEPLOYMENT.kind,
    metadata: { name, namespace: 'ns', uid, ...extra },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'a', image: 'i' }] } },
    },
  };
}

function set(
  name: string,
  labels: Record<string, string>,
  owner?: string,
  deleting = false,
): BasicReplicaSet {
  return {
    apiVersion: BASIC_REPLICA_SET.apiVersion,
    kind: BASIC_REPLICA_SET.kind,
    metadata: {
      name,
      namespace: 'ns',
      uid: `${name}-uid`,
      labels,
      ...(owner
        ? {
            ownerReferences: [
              {
                apiVersion: BASIC_DEPLOYMENT.apiVersion,
                kind: 'BasicDeployment',
                name: 'x',
                uid: owner,
                controller: true,
              },
            ],
          }
        : {}),
      ...(deleting ? { deletionTimestamp: new Date() } : {}),
    },
    spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [] } } },
  };
}

/** Records what the claim asked for; the owner re-check answers `stillAdopts`. */
function recorder(stillAdopts = true) {
  const calls: string[] = [];
  const ops: ClaimOperations = {
    ownerStillAdopts: async () => {
      calls.push('recheck');
      return stillAdopts;
    },
    adopt: async (s) => {
      calls.push(`adopt ${s.metadata.name}`);
      return s;
    },
    release: async (s) => {
      calls.push(`release ${s.metadata.name}`);
    },
  };
  return { calls, ops };
}

const names = (sets: BasicReplicaSet[] | undefined) => sets?.map((s) => s.metadata.name);

describe('claimSets', () => {
  it('keeps its matching sets without any write or re-check', async () => {
    const { calls, ops } = recorder();
    const claimed = await claimSets(deployment(), [set('a', { app: 'web' }, 'd-uid')], ops);
    assert.deepEqual(names(claimed), ['a']);
    assert.deepEqual(calls, []);
  });
  it('adopts matching orphans after one fresh re-check of the deployment', async () => {
    const { calls, ops } = recorder();
    const claimed = await claimSets(
      deployment(),
      [set('o1', { app: 'web' }), set('o2', { app: 'web', x: 'y' }), set('other', { app: 'db' })],
      ops,
    );
    assert.deepEqual(names(claimed), ['o1', 'o2']);
    assert.deepEqual(calls, ['recheck', 'adopt o1', 'adopt o2']);
  });
  it('adopts nothing, and claims nothing, when the re-check says the deployment is gone, replaced or deleting', async () => {
    const { calls, ops } = recorder(false);
    const claimed = await claimSets(
      deployment(),
      [set('mine', { app: 'web' }, 'd-uid'), set('o', { app: 'web' })],
      ops,
    );
    assert.equal(claimed, undefined);
    assert.deepEqual(calls, ['recheck']);
  });
  it('releases its sets whose labels stopped matching', async () => {
    const { calls, ops } = recorder();
    const claimed = await claimSets(deployment(), [set('moved', { app: 'elsewhere' }, 'd-uid')], ops);
    assert.deepEqual(names(claimed), []);
    assert.deepEqual(calls, ['release moved']);
  });
  it('while being deleted: keeps its matching sets, neither adopts nor releases', async () => {
    const { calls, ops } = recorder();
    const d = deployment('web', 'd-uid', { deletionTimestamp: new Date() });
    const claimed = await claimSets(
      d,
      [set('mine', { app: 'web' }, 'd-uid'), set('moved', { app: 'x' }, 'd-uid'), set('o', { app: 'web' })],
      ops,
    );
    assert.deepEqual(names(claimed), ['mine']);
    assert.deepEqual(calls, []);
  });
  it('ignores sets controlled by another object and orphans being deleted', async () => {
    const { calls, ops } = recorder();
    const claimed = await claimSets(
      deployment(),
      [set('theirs', { app: 'web' }, 'other-uid'), set('dying', { app: 'web' }, undefined, true)],
      ops,
    );
    assert.deepEqual(names(claimed), []);
    assert.deepEqual(calls, []);
  });
  it('an empty selector adopts nothing', async () => {
    const { calls, ops } = recorder();
    const d = deployment();
    d.spec.selector = {};
    assert.deepEqual(names(await claimSets(d, [set('o', { app: 'web' })], ops)), []);
    assert.deepEqual(calls, []);
  });
});

describe('deploymentsForOrphan', () => {
  const all = [deployment('web', 'w'), deployment('db', 'd')];
  const inNamespace = () => all;
  it('maps an orphan to the deployments whose selector matches its labels', () => {
    assert.deepEqual(
      deploymentsForOrphan(set('o', { app: 'web', extra: '1' }), inNamespace).map((d) => d.metadata.name),
      ['web'],
    );
  });
  it('maps a controlled set to none (the owner watch handles it)', () => {
    assert.deepEqual(deploymentsForOrphan(set('o', { app: 'web' }, 'w'), inNamespace), []);
  });
  it('skips deployments with an empty selector', () => {
    const empty = deployment('any', 'a');
    empty.spec.selector = {};
    assert.deepEqual(
      deploymentsForOrphan(set('o', { app: 'x' }), () => [empty]),
      [],
    );
  });
});
