import type { V1LabelSelector } from '@kubernetes/client-node';
import { controllerRefOf, type KubeObject } from '../../../runtime/client/object.ts';
import type { CachedPod } from '../cached.ts';

/** A replica set as the deletion ranking needs it. */
export interface RelatedSet extends KubeObject {
  spec: { selector: V1LabelSelector };
}

/**
 * The sets with the same controller owner as `set` (itself included), upstream
 * getReplicaSetsWithSameController: a set without a controller owner has none, not even itself.
 */
export function setsWithSameController<S extends RelatedSet>(set: S, candidates: readonly S[]): S[] {
  const owner = controllerRefOf(set);
  if (!owner) return [];
  return candidates.filter(
    (candidate) =>
      candidate.metadata?.namespace === set.metadata?.namespace &&
      controllerRefOf(candidate)?.uid === owner.uid,
  );
}

/**
 * The pods of every set with the same controller owner as `set` (upstream getIndirectlyRelatedPods),
 * each once: the deletion ranking counts how many of them share a node with each candidate, so a
 * scale-down spreads the remaining pods of a whole BasicDeployment, not just of one set.
 * `podsMatching` lists the pods a set's selector matches in its namespace.
 */
export function indirectlyRelatedPods<S extends RelatedSet>(
  set: S,
  candidates: readonly S[],
  podsMatching: (selector: V1LabelSelector, namespace: string) => readonly CachedPod[],
): CachedPod[] {
  const seen = new Set<string>();
  const related: CachedPod[] = [];
  for (const sibling of setsWithSameController(set, candidates)) {
    for (const pod of podsMatching(sibling.spec.selector, sibling.metadata?.namespace ?? '')) {
      const uid = pod.metadata?.uid ?? '';
      if (seen.has(uid)) continue;
      seen.add(uid);
      related.push(pod);
    }
  }
  return related;
}
