import type { V1Pod } from '@kubernetes/client-node';
import { isNotFound } from '../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../src/runtime/client/kube-client.ts';
import { NEVER_READY_ANNOTATION, SIDE_LABEL, type WorkloadModel } from './model.ts';
import {
  controllerOf,
  isLive,
  isReady,
  listPods,
  listSets,
  ORPHAN_PREFIX,
  type PodTemplateObject,
  type SetObject,
  type Side,
  type WireCondition,
  type WorkloadObject,
} from './sides.ts';

/** What one side looks like at one moment, read from the API server. */
export interface SideState {
  side: Side;
  at: number;
  workload: WorkloadObject | undefined;
  sets: SetObject[];
  pods: V1Pod[];
  /** When the rollout under way began (the last step that changed the template), harness's clock. */
  rolloutSince?: number;
}

export async function readSide(
  client: KubeClient,
  side: Side,
  namespace: string,
  rolloutSince?: number,
): Promise<SideState> {
  const [workload, sets, pods] = await Promise.all([
    client.get<WorkloadObject>(side.workloadType, namespace, side.name).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    }),
    listSets(client, side, namespace),
    listPods(client, side, namespace),
  ]);
  return { side, at: Date.now(), workload, sets, pods, ...(rolloutSince ? { rolloutSince } : {}) };
}

/** Label keys that differ by construction between the sides: ignored when comparing labels. */
export function comparableLabels(
  side: Side,
  labels: Record<string, string> | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels ?? {})) {
    if (k === side.hashLabel) continue;
    const domain = k.includes('/') ? k.slice(0, k.indexOf('/')) : '';
    if (domain === 'basicoperator.dev' || domain.endsWith('.basicoperator.dev')) continue;
    out[k] = k === SIDE_LABEL ? '<side>' : v;
  }
  return out;
}

const sortedPairs = (record: Record<string, string>) =>
  Object.entries(record)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/** A template's identity across the sides: image, annotations and labels, minus what differs by construction. */
export function templateKey(side: Side, template: PodTemplateObject): string {
  const image = template.spec.containers.map((c) => c.image).join('+');
  const annotations = { ...template.metadata?.annotations };
  const neverReady = annotations[NEVER_READY_ANNOTATION] === 'true';
  delete annotations[NEVER_READY_ANNOTATION];
  const rest = sortedPairs(annotations);
  return [
    image,
    ...(neverReady ? ['never-ready'] : []),
    `{${sortedPairs(comparableLabels(side, template.metadata?.labels))}}`,
    ...(rest ? [`annotations{${rest}}`] : []),
  ].join(' ');
}

export interface SetSummary {
  revision: string;
  replicas: number;
  statusReplicas: number;
  readyReplicas: number;
  availableReplicas: number;
  livePods: number;
}

/** The comparable projection of a side: equal snapshots mean equal behaviour. */
export interface Snapshot {
  exists: boolean;
  status: Record<string, number>;
  conditions: Record<string, string>;
  /** By template key. */
  sets: Record<string, SetSummary>;
  /** Live pods that match the side's selector and have no controller. */
  orphans: number;
  /** Owned pods whose labels are not their set's template labels (ignoring the hash and our domains). */
  podLabelIssues: string[];
}

const COMPARED_CONDITIONS = ['Available', 'Progressing', 'ReplicaFailure'];
/**
 * Progressing=True reasons of a rollout under way. Which one a resting rollout shows depends on how
 * many syncs saw the new set before its pods existed (kube-controller-manager shows either for the same
 * steps), so they compare as one.
 */
const IN_PROGRESS = ['NewReplicaSetCreated', 'FoundNewReplicaSet', 'ReplicaSetUpdated'];
const IN_PROGRESS_CLASS = IN_PROGRESS.join('|');
const STATUS_FIELDS = [
  'replicas',
  'updatedReplicas',
  'readyReplicas',
  'availableReplicas',
  'unavailableReplicas',
] as const;

/**
 * Progressing=NewReplicaSetAvailable written before the rollout under way began (before its newest
 * set existed, or before the step that changed the template back to an existing set's), on a
 * rollout that has not finished. syncRolloutStatus skips its progress check for good once it sees
 * replicas == updatedReplicas under a NewReplicaSetAvailable reason, and when it sees that first
 * is timing: kube-controller-manager writes NewReplicaSetCreated with the Deployment it read when it
 * creates a set, and a second update right behind the template change (a burst) makes that write
 * fail with a conflict, its retry finding the set and writing nothing (seed 10 of the first 50-seed
 * run); a Recreate whose old pods go at once can show it replicas == updatedReplicas == 0 before its
 * first status write of the rollout (seed 95 of the 100-seed run with --restart-kcm). Which of the
 * two a resting rollout then shows is timing, so this one compares as in progress too.
 */
function staleAvailable(state: SideState, c: WireCondition): boolean {
  const w = state.workload;
  if (c.reason !== 'NewReplicaSetAvailable' || !w) return false;
  const replicas = w.spec.replicas ?? 1;
  const finished =
    (w.status?.updatedReplicas ?? 0) >= replicas && (w.status?.availableReplicas ?? 0) >= replicas;
  if (finished) return false;
  // Ours is a metav1.Condition (no lastUpdateTime): status.lastProgressTime is when it was written, as
  // lastUpdateTime is for kube-controller-manager (neither moves while the reason stays).
  const since = millis(c.lastUpdateTime ?? w.status?.lastProgressTime ?? c.lastTransitionTime);
  if (!Number.isFinite(since)) return false;
  // The API server's times have whole seconds: a write in the second the step began counts as after.
  if (state.rolloutSince !== undefined && since < Math.floor(state.rolloutSince / 1000) * 1000) return true;
  const newest = Math.max(...state.sets.map((s) => millis(s.metadata.creationTimestamp)));
  return Number.isFinite(newest) && since < newest;
}

export function snapshot(state: SideState): Snapshot {
  const { side, workload } = state;
  if (!workload)
    return { exists: false, status: {}, conditions: {}, sets: {}, orphans: 0, podLabelIssues: [] };
  const status: Record<string, number> = {};
  for (const field of STATUS_FIELDS) status[field] = workload.status?.[field] ?? 0;
  const conditions: Record<string, string> = {};
  for (const c of workload.status?.conditions ?? []) {
    if (!COMPARED_CONDITIONS.includes(c.type)) continue;
    const inProgress =
      c.type === 'Progressing' && (IN_PROGRESS.includes(c.reason ?? '') || staleAvailable(state, c));
    conditions[c.type] = `${c.status}/${(inProgress ? IN_PROGRESS_CLASS : c.reason) ?? ''}`;
  }
  const live = state.pods.filter(isLive);
  const sets: Record<string, SetSummary> = {};
  const issues = new Set<string>();
  for (const set of state.sets) {
    const key = templateKey(side, set.spec.template);
    const owned = live.filter((p) => controllerOf(p)?.uid === set.metadata.uid);
    const wanted = sortedPairs(comparableLabels(side, set.spec.template.metadata?.labels));
    for (const pod of owned) {
      const got = sortedPairs(comparableLabels(side, pod.metadata?.labels));
      if (got !== wanted) issues.add(`pod labels {${got}} differ from the template's {${wanted}}`);
    }
    const summary: SetSummary = {
      revision: set.metadata.annotations?.[side.revisionAnnotation] ?? '',
      replicas: set.spec.replicas ?? 1,
      statusReplicas: set.status?.replicas ?? 0,
      readyReplicas: set.status?.readyReplicas ?? 0,
      availableReplicas: set.status?.availableReplicas ?? 0,
      livePods: owned.length,
    };
    // Two sets with one template (a hash collision) would be a divergence of their own: keep both.
    sets[key in sets ? `${key} (second set)` : key] = summary;
  }
  return {
    exists: true,
    status,
    conditions,
    sets,
    orphans: live.filter((p) => !controllerOf(p)).length,
    podLabelIssues: [...issues].sort(),
  };
}

/** Flattens a snapshot to path -> value lines, for diffs and change detection. */
export function flatten(s: Snapshot): Map<string, string> {
  const out = new Map<string, string>();
  out.set('exists', String(s.exists));
  for (const [k, v] of Object.entries(s.status)) out.set(`status.${k}`, String(v));
  for (const [k, v] of Object.entries(s.conditions)) out.set(`conditions.${k}`, v);
  for (const [key, set] of Object.entries(s.sets)) {
    for (const [k, v] of Object.entries(set)) out.set(`sets[${key}].${k}`, String(v));
  }
  out.set('orphans', String(s.orphans));
  s.podLabelIssues.forEach((issue, i) => {
    out.set(`podLabels[${i}]`, issue);
  });
  return out;
}

/** Differences as readable lines `path: kcm=<a> bo=<b>`; `skip` drops paths starting with a prefix. */
export function diffSnapshots(a: Snapshot, b: Snapshot, skip: readonly string[] = []): string[] {
  const fa = flatten(a);
  const fb = flatten(b);
  const keys = [...new Set([...fa.keys(), ...fb.keys()])].sort();
  const lines: string[] = [];
  for (const key of keys) {
    if (skip.some((prefix) => key.startsWith(prefix))) continue;
    const va = fa.get(key) ?? '(none)';
    const vb = fb.get(key) ?? '(none)';
    if (va !== vb) lines.push(`${key}: kcm=${va} bo=${vb}`);
  }
  return lines;
}

const millis = (t: unknown) =>
  t instanceof Date ? t.getTime() : typeof t === 'string' ? Date.parse(t) : Number.NaN;

/**
 * Why this side may still change without anyone touching it, or [] when it is at rest: its status
 * lags its generation, a set's status lags, a ready pod is waiting out minReadySeconds, or a stuck
 * rollout's progress deadline falls due before `horizon` (then the caller waits for it to fire).
 */
export function pendingReasons(
  state: SideState,
  model: WorkloadModel,
  now: number,
  horizon: number,
): string[] {
  const reasons: string[] = [];
  const w = state.workload;
  if (!w) return ['the workload does not exist'];
  const generation = w.metadata.generation ?? 0;
  if ((w.status?.observedGeneration ?? 0) < generation) {
    reasons.push(`observedGeneration ${w.status?.observedGeneration ?? 0} < generation ${generation}`);
  }
  for (const set of state.sets) {
    if ((set.status?.observedGeneration ?? 0) < (set.metadata.generation ?? 0)) {
      reasons.push(`set ${set.metadata.name} status lags its generation`);
    }
  }
  const minReadyMs = model.minReadySeconds * 1000;
  if (minReadyMs > 0) {
    for (const pod of state.pods.filter((p) => isLive(p) && isReady(p))) {
      const readySince = millis(pod.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime);
      if (Number.isFinite(readySince) && readySince + minReadyMs + 1000 > now) {
        reasons.push(`pod ${pod.metadata?.name} is not available yet (minReadySeconds)`);
        break;
      }
    }
  }
  if (state.pods.some((p) => isLive(p) && !p.status?.podIP && !p.metadata?.name?.startsWith(ORPHAN_PREFIX))) {
    reasons.push('a pod has not started yet');
  }
  const progressing = w.status?.conditions?.find((c) => c.type === 'Progressing');
  if (
    !model.paused &&
    model.progressDeadlineSeconds < 600 &&
    progressing?.status === 'True' &&
    progressing.reason !== 'NewReplicaSetAvailable'
  ) {
    const since = millis(
      w.status?.lastProgressTime ?? progressing.lastUpdateTime ?? progressing.lastTransitionTime,
    );
    const due = since + model.progressDeadlineSeconds * 1000 + 1500;
    if (Number.isFinite(due) && due > now && due < horizon) {
      reasons.push(`the progress deadline falls due in ${((due - now) / 1000).toFixed(1)}s`);
    }
  }
  return reasons;
}
