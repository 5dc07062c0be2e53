import type { V1LabelSelector } from '@kubernetes/client-node';
import { controllerRefOf, type KubeObject } from '../../../runtime/client/object.ts';
import { selectorMatches } from '../../../runtime/labels.ts';
import type { CachedPod } from '../cached.ts';
import { isPodActive, isPodFinished, isPodTerminating } from './pod-state.ts';

/** The replica set, as far as claiming pods is concerned. */
export interface ClaimOwner {
  uid: string;
  namespace: string;
  selector: V1LabelSelector;
  /** The set has a deletionTimestamp: it neither adopts nor releases. */
  deleting: boolean;
}

/**
 * What to do with the pods that concern one replica set (upstream PodControllerRefManager.ClaimPods
 * over the active pods, plus FilterClaimedPods over the terminating ones).
 */
export interface ClaimPlan {
  /** Active pods it controls that match its selector: the replicas. */
  active: CachedPod[];
  /** Terminating pods it controls that match its selector (status.terminatingReplicas). */
  terminating: CachedPod[];
  /** Active orphans that match: adopt (controller reference plus our marker label), then count them. */
  adopt: KubeObject[];
  /** Pods it controls and that match but lack our marker label (e.g. a user removed it): mark them. */
  mark: KubeObject[];
  /** Active pods it controls that no longer match its selector: release them. */
  release: KubeObject[];
}

/**
 * Sorts the candidate pods of a replica set. `marked` are full pods carrying our marker label (the
 * controller's pod cache); `unmarked` are pods without it, as metadata only (their phase is
 * unknown, so a finished orphan is adopted too; it then counts as neither active nor terminating).
 * Candidates may include pods of other owners and pods that do not match; both lists may overlap
 * with the same uid (a pod that gained or lost the marker in between); the marked copy wins.
 */
export function planClaims(
  owner: ClaimOwner,
  marked: readonly CachedPod[],
  unmarked: readonly KubeObject[] = [],
): ClaimPlan {
  const plan: ClaimPlan = { active: [], terminating: [], adopt: [], mark: [], release: [] };
  const seen = new Set<string>();
  for (const pod of marked) {
    const uid = pod.metadata?.uid ?? '';
    if (seen.has(uid) || pod.metadata?.namespace !== owner.namespace) continue;
    seen.add(uid);
    const matches = selectorMatches(owner.selector, pod.metadata?.labels);
    const ref = controllerRefOf(pod);
    if (ref?.uid === owner.uid) {
      if (matches) {
        const counted = countsAs(pod);
        if (counted) plan[counted].push(pod);
      } else if (isPodActive(pod) && !owner.deleting) {
        plan.release.push(pod);
      }
    } else if (!ref && matches && isPodActive(pod) && !owner.deleting) {
      plan.adopt.push(pod);
    }
  }
  for (const pod of unmarked) {
    const uid = pod.metadata?.uid ?? '';
    if (seen.has(uid) || pod.metadata?.namespace !== owner.namespace) continue;
    seen.add(uid);
    if (pod.metadata?.deletionTimestamp != null) continue;
    const matches = selectorMatches(owner.selector, pod.metadata?.labels);
    const ref = controllerRefOf(pod);
    if (ref?.uid === owner.uid) {
      if (matches) plan.mark.push(pod);
      else if (!owner.deleting) plan.release.push(pod);
    } else if (!ref && matches && !owner.deleting) {
      plan.adopt.push(pod);
    }
  }
  return plan;
}

/**
 * Where a pod of the set counts: active (not terminating, not finished), terminating (a deletion
 * timestamp and not finished: upstream IsPodTerminating), or nowhere (Succeeded or Failed).
 */
export function countsAs(pod: CachedPod): 'active' | 'terminating' | undefined {
  if (isPodFinished(pod)) return undefined;
  return isPodTerminating(pod) ? 'terminating' : 'active';
}
