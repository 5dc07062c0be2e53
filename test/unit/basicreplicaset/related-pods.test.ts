import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1LabelSelector, V1Pod } from '@kubernetes/client-node';
import type { BasicReplicaSet } from '../../../src/apis/index.ts';
import { podsToDeleteInOrder } from '../../../src/controllers/basicreplicaset/logic/deletion-order.ts';
import {
  indirectlyRelatedPods,
  setsWithSameController,
} from '../../../src/controllers/basicreplicaset/logic/related-pods.ts';
import { selectorMatches } from '../../../src/runtime/labels.ts';
import { pod } from './pods.ts';
import { replicaSet } from './sets.ts';

const NOW = Date.UTC(2024, 5, 1, 12, 0, 0);
const HOUR = 3_600_000;

function labelled(name: string, labels: Record<string, string>, node: string, created: number): V1Pod {
  const p = pod(name, { node, readySince: created + 1000, created });
  p.metadata!.namespace = 'ns';
  p.metadata!.labels = labels;
  return p;
}

describe('deletion ranking across sibling sets (upstream getIndirectlyRelatedPods)', () => {
  // A BasicDeployment mid-rollout: the old set has a pod on n1 and one on n2; the new set has two on n1.
  const oldSet = replicaSet('web-old', { app: 'web', hash: 'old' }, { owner: 'web' });
  const newSet = replicaSet('web-new', { app: 'web', hash: 'new' }, { owner: 'web' });
  const standalone = replicaSet('solo', { app: 'solo' });
  const other = replicaSet('api-old', { app: 'api', hash: 'old' }, { owner: 'api' });
  const sets = [oldSet, newSet, standalone, other];
  const oldOnN1 = labelled('old-n1', { app: 'web', hash: 'old' }, 'n1', NOW - 10 * HOUR);
  const oldOnN2 = labelled('old-n2', { app: 'web', hash: 'old' }, 'n2', NOW - 2 * HOUR);
  const allPods = [
    oldOnN1,
    oldOnN2,
    labelled('new-1', { app: 'web', hash: 'new' }, 'n1', NOW - HOUR),
    labelled('new-2', { app: 'web', hash: 'new' }, 'n1', NOW - HOUR),
    labelled('api-1', { app: 'api', hash: 'old' }, 'n2', NOW - HOUR),
  ];
  const podsMatching = (selector: V1LabelSelector, namespace: string) =>
    allPods.filter(
      (p) => p.metadata?.namespace === namespace && selectorMatches(selector, p.metadata?.labels),
    );

  it('finds the sets with the same controller owner, itself included; none for a set without one', () => {
    const names = (s: BasicReplicaSet[]) => s.map((x) => x.metadata.name);
    assert.deepEqual(names(setsWithSameController(oldSet, sets)), ['web-old', 'web-new']);
    assert.deepEqual(names(setsWithSameController(standalone, sets)), []);
  });

  it('collects the pods of every sibling set once', () => {
    const related = indirectlyRelatedPods(oldSet, sets, podsMatching);
    assert.deepEqual(related.map((p) => p.metadata?.name).sort(), ['new-1', 'new-2', 'old-n1', 'old-n2']);
  });

  it('deletes the pod on the node crowded with pods of its sibling sets, even if it is older', () => {
    const related = indirectlyRelatedPods(oldSet, sets, podsMatching);
    const victims = podsToDeleteInOrder([oldOnN1, oldOnN2], 1, NOW, related);
    assert.deepEqual(
      victims.map((p) => p.metadata?.name),
      ['old-n1'],
      'n1 holds three pods of the deployment, n2 one',
    );
    // Counting the set's own pods only, each node holds one and the newer pod would go instead.
    assert.deepEqual(
      podsToDeleteInOrder([oldOnN1, oldOnN2], 1, NOW, [oldOnN1, oldOnN2]).map((p) => p.metadata?.name),
      ['old-n2'],
    );
  });
});
