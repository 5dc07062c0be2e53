// What the operator's cache keeps of the core objects it caches: of each kind, the union of the
// fields the controllers declare they read (`reads` in src/controllers/<name>/declaration.ts), merged
// at startup from the list in index.ts. A controller reads its cached objects through the types its
// shapes give (its cached.ts), so it cannot read a field no shape keeps. Nothing reads a pod's spec
// but its node, nor its image IDs or probe times: a cached kwok pod takes about 1.4 KB of heap
// instead of 5 KB (`npm run bench:cache`). The operator's own resources are cached whole.
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { keepFields, mergeShapes, type Shape, type StringPool } from '../runtime/cache/keep-fields.ts';
import type { CacheReads, ControllerDeclaration } from './declaration.ts';

/** What the cache keeps of each kind: the union of the controllers' reads. */
interface CacheShapes {
  readonly pods: Shape<V1Pod>;
  /** Kept besides `pods` of the pods that carry the label, by label. */
  readonly labelledPods: ReadonlyMap<string, Shape<V1Pod>>;
  readonly jobs: Shape<V1Job>;
  readonly claims: Shape<V1PersistentVolumeClaim>;
}

export function mergedCacheShapes(controllers: readonly ControllerDeclaration[]): CacheShapes {
  const reads: CacheReads[] = controllers.flatMap((controller) =>
    controller.reads ? [controller.reads] : [],
  );
  const labelledPods = new Map<string, Shape<V1Pod>>();
  for (const { labelledPods: labelled } of reads) {
    if (!labelled) continue;
    labelledPods.set(labelled.label, mergeShapes(labelledPods.get(labelled.label) ?? {}, labelled.shape));
  }
  return {
    pods: mergeShapes(...reads.map((r) => r.pods ?? {})),
    labelledPods,
    jobs: mergeShapes(...reads.map((r) => r.jobs ?? {})),
    claims: mergeShapes(...reads.map((r) => r.claims ?? {})),
  };
}

/** The transforms of the cached kinds, with one pool: a PodMachine's pod, claims and Jobs share its name and labels. */
export function cacheTransforms(
  shapes: CacheShapes,
  pool: StringPool,
): {
  pods: (pod: V1Pod) => V1Pod;
  jobs: (job: V1Job) => V1Job;
  claims: (claim: V1PersistentVolumeClaim) => V1PersistentVolumeClaim;
} {
  return {
    pods: podTransform(shapes, pool),
    jobs: keepFields(shapes.jobs, pool),
    claims: keepFields(shapes.claims, pool),
  };
}

/**
 * A pod keeps `shapes.pods`, and what `shapes.labelledPods` adds for the labels it carries. Only the
 * pods PodMachines make report addresses: the IPs of every pod would cost 144 B more per cached pod
 * (1,529 against 1,385 B at 10,000 pods, `npm run bench:cache`).
 */
function podTransform(shapes: CacheShapes, pool: StringPool): (pod: V1Pod) => V1Pod {
  const plain = keepFields(shapes.pods, pool);
  const labels = [...shapes.labelledPods.keys()];
  /** By the labels a pod carries: made on first use, as a pod rarely carries more than one. */
  const byCarried = new Map<string, (pod: V1Pod) => V1Pod>();
  return (pod) => {
    const podLabels = pod.metadata?.labels;
    const carried = podLabels ? labels.filter((label) => podLabels[label] !== undefined) : [];
    if (carried.length === 0) return plain(pod);
    const key = carried.join(' ');
    let transform = byCarried.get(key);
    if (!transform) {
      const added = carried.map((label) => shapes.labelledPods.get(label) ?? {});
      transform = keepFields(mergeShapes(shapes.pods, ...added), pool);
      byCarried.set(key, transform);
    }
    return transform(pod);
  };
}
