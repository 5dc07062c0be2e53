import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import fastJsonPatch from 'fast-json-patch';
import { REPLICA_SET_POD_LABEL } from '../../../src/apis/index.ts';
import {
  adoptPodPatch,
  markPodPatch,
  releasePodPatch,
} from '../../../src/controllers/basicreplicaset/pod-claims.ts';
import type { JsonPatch } from '../../../src/runtime/write/guarded-patch.ts';
import { replicaSet } from './sets.ts';

const rs = replicaSet('web', { app: 'web' });

function orphan(labels: Record<string, string> | undefined = { app: 'web' }): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', uid: 'pod-uid', resourceVersion: '7', labels },
  };
}

/** Applies `patch` the way the API server would: atomically, failing on a `test` that does not hold. */
function apply(obj: V1Pod, patch: JsonPatch): V1Pod {
  const result = fastJsonPatch.applyPatch(structuredClone(obj), patch, true, false);
  return result.newDocument;
}

describe('claim patches', () => {
  it('adoption adds the controller reference and our marker, keeping every label', () => {
    const adopted = apply(
      orphan({ app: 'web', 'app.kubernetes.io/managed-by': 'Helm' }),
      adoptPodPatch(orphan(), rs),
    );
    assert.deepEqual(adopted.metadata?.labels, {
      app: 'web',
      'app.kubernetes.io/managed-by': 'Helm',
      [REPLICA_SET_POD_LABEL]: 'true',
    });
    assert.deepEqual(
      adopted.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]),
      [['BasicReplicaSet', 'web', 'uid-web', true]],
    );
  });

  it('adoption is refused if the pod changed since it was read', () => {
    const patch = adoptPodPatch(orphan(), rs);
    const changed = orphan();
    changed.metadata!.resourceVersion = '8';
    assert.throws(() => apply(changed, patch));
    const replaced = orphan();
    replaced.metadata!.uid = 'other';
    assert.throws(() => apply(replaced, patch));
  });

  it('adoption of a pod with no labels at all creates the label map', () => {
    const bare = orphan();
    delete bare.metadata!.labels;
    const adopted = apply(bare, adoptPodPatch(bare, rs));
    assert.deepEqual(adopted.metadata?.labels, { [REPLICA_SET_POD_LABEL]: 'true' });
  });

  it('marking adds only the marker', () => {
    const marked = apply(orphan({ app: 'web' }), markPodPatch(orphan({ app: 'web' })));
    assert.deepEqual(marked.metadata?.labels, { app: 'web', [REPLICA_SET_POD_LABEL]: 'true' });
  });

  it('marking is refused if the pod changed since it was read (another sync may have marked it)', () => {
    const patch = markPodPatch(orphan({ app: 'web' }));
    const changed = orphan({ app: 'web', [REPLICA_SET_POD_LABEL]: 'true' });
    changed.metadata!.resourceVersion = '8';
    assert.throws(() => apply(changed, patch));
  });

  it('release removes the reference and the marker, nothing else', () => {
    const adopted = apply(orphan(), adoptPodPatch(orphan(), rs));
    adopted.metadata!.labels!.app = 'other';
    const released = apply(adopted, releasePodPatch(adopted, rs)!);
    assert.deepEqual(released.metadata?.ownerReferences, []);
    assert.deepEqual(released.metadata?.labels, { app: 'other' });
    assert.equal(releasePodPatch(released, rs), undefined, 'nothing to release');
  });
});
