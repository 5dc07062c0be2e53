import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1OwnerReference, V1Pod } from '@kubernetes/client-node';
import { type ClaimOwner, planClaims } from '../../../src/controllers/basicreplicaset/logic/claim.ts';
import type { KubeObject } from '../../../src/runtime/client/object.ts';
import { type PodOptions, pod } from './pods.ts';

const owner: ClaimOwner = {
  uid: 'rs-uid',
  namespace: 'ns',
  selector: { matchLabels: { app: 'web' } },
  deleting: false,
};

const ref = (uid: string, controller = true): V1OwnerReference => ({
  apiVersion: 'apps.basicoperator.dev/v1alpha1',
  kind: 'BasicReplicaSet',
  name: uid,
  uid,
  controller,
});

interface Facts extends PodOptions {
  labels?: Record<string, string>;
  owners?: V1OwnerReference[];
}

/** A full pod in namespace ns; by default it matches and belongs to the set. */
function full(name: string, facts: Facts = {}): V1Pod {
  const p = pod(name, { node: 'n1', ...facts });
  p.metadata!.namespace = 'ns';
  p.metadata!.labels = facts.labels ?? { app: 'web' };
  p.metadata!.ownerReferences = facts.owners ?? [ref('rs-uid')];
  return p;
}

/** The metadata-only copy of a pod, as the cache of pods without our marker holds it. */
function meta(name: string, facts: Facts = {}): KubeObject {
  const { metadata } = full(name, facts);
  return { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata };
}

const names = (objs: KubeObject[]) => objs.map((o) => o.metadata?.name).sort();

describe('planClaims', () => {
  it('counts its matching pods: active ones, and terminating ones apart; finished ones not at all', () => {
    const plan = planClaims(owner, [
      full('running'),
      full('terminating', { deleting: true }),
      full('succeeded', { phase: 'Succeeded' }),
      full('failed-deleting', { phase: 'Failed', deleting: true }),
    ]);
    assert.deepEqual(names(plan.active), ['running']);
    assert.deepEqual(names(plan.terminating), ['terminating']);
    assert.deepEqual([plan.adopt, plan.mark, plan.release], [[], [], []]);
  });

  it('adopts active matching orphans from either cache, never terminating ones', () => {
    const plan = planClaims(
      owner,
      [full('marked-orphan', { owners: [] }), full('dying-orphan', { owners: [], deleting: true })],
      [meta('orphan', { owners: [] }), meta('dying', { owners: [], deleting: true })],
    );
    assert.deepEqual(names(plan.adopt), ['marked-orphan', 'orphan']);
    assert.deepEqual(plan.active, []);
  });

  it('adopts an orphan with only non-controller owners', () => {
    const plan = planClaims(owner, [], [meta('orphan', { owners: [ref('someone', false)] })]);
    assert.deepEqual(names(plan.adopt), ['orphan']);
  });

  it('leaves pods of other controllers, other namespaces and other labels alone', () => {
    const elsewhere = meta('elsewhere', { owners: [] });
    elsewhere.metadata!.namespace = 'other';
    const plan = planClaims(
      owner,
      [full('theirs', { owners: [ref('other-rs')] })],
      [
        meta('not-matching', { owners: [], labels: { app: 'api' } }),
        elsewhere,
        meta('machine', { owners: [ref('m')] }),
      ],
    );
    assert.deepEqual([plan.active, plan.adopt, plan.mark, plan.release], [[], [], [], []]);
  });

  it('releases active pods it controls that stopped matching, not terminating ones', () => {
    const plan = planClaims(
      owner,
      [
        full('relabelled', { labels: { app: 'other' } }),
        full('gone', { labels: { app: 'other' }, deleting: true }),
      ],
      [meta('relabelled-unmarked', { labels: { app: 'other' } })],
    );
    assert.deepEqual(names(plan.release), ['relabelled', 'relabelled-unmarked']);
  });

  it('marks matching pods it controls that lack the marker label', () => {
    const plan = planClaims(owner, [], [meta('unmarked'), meta('unmarked-dying', { deleting: true })]);
    assert.deepEqual(names(plan.mark), ['unmarked']);
  });

  it('neither adopts nor releases while the set is being deleted', () => {
    const plan = planClaims(
      { ...owner, deleting: true },
      [full('mine'), full('relabelled', { labels: { app: 'other' } }), full('orphan', { owners: [] })],
      [meta('orphan-2', { owners: [] })],
    );
    assert.deepEqual(names(plan.active), ['mine']);
    assert.deepEqual([plan.adopt, plan.release], [[], []]);
  });

  it('takes each pod once, the full copy first', () => {
    const plan = planClaims(owner, [full('a'), full('a')], [meta('a', { owners: [] })]);
    assert.deepEqual(names(plan.active), ['a']);
    assert.deepEqual(plan.adopt, []);
  });
});
