import type { V1LabelSelector } from '@kubernetes/client-node';
import type { BasicDeployment, BasicReplicaSet } from '../../apis/index.ts';
import { controllerRefOf, isBeingDeleted } from '../../runtime/client/object.ts';
import { selectorMatches } from '../../runtime/labels.ts';

/** The writes a claim needs; the reconciler backs them with the API server. */
export interface ClaimOperations {
  /**
   * A fresh read of the deployment: false when it is gone, was replaced (another uid) or is being
   * deleted (upstream RecheckDeletionTimestamp). Called at most once per claim, and only when there
   * is an orphan to adopt.
   */
  ownerStillAdopts(): Promise<boolean>;
  /** Makes the deployment the orphan's controller; undefined when the set is gone. */
  adopt(set: BasicReplicaSet): Promise<BasicReplicaSet | undefined>;
  /** Removes the deployment's ownerReference from a set that stopped matching its selector. */
  release(set: BasicReplicaSet): Promise<void>;
}

/** A nil or empty selector matches nothing here, not everything (as upstream's deployment controller). */
export function selectsAnything(selector: V1LabelSelector | undefined): selector is V1LabelSelector {
  return (
    selector !== undefined &&
    (Object.keys(selector.matchLabels ?? {}).length > 0 || (selector.matchExpressions ?? []).length > 0)
  );
}

/**
 * The sets `d` controls (upstream ClaimReplicaSets): of `candidates` (its own sets and those its
 * selector matches), its own that still match; orphans that match and are not being deleted,
 * adopted once a fresh read confirms the deployment still adopts; its own that stopped matching are
 * released (unless the deployment is being deleted). Sets controlled by another object are left
 * alone. Returns undefined when the fresh read says the deployment no longer adopts: the caller then
 * does nothing, as its copy of the deployment is stale.
 */
export async function claimSets(
  d: BasicDeployment,
  candidates: readonly BasicReplicaSet[],
  ops: ClaimOperations,
): Promise<BasicReplicaSet[] | undefined> {
  const uid = d.metadata.uid;
  const selector = selectsAnything(d.spec.selector) ? d.spec.selector : undefined;
  const claimed: BasicReplicaSet[] = [];
  let ownerChecked = false;
  for (const set of candidates) {
    const ref = controllerRefOf(set);
    const matches = selector !== undefined && selectorMatches(selector, set.metadata.labels);
    if (ref) {
      if (ref.uid !== uid) continue;
      if (matches) claimed.push(set);
      else if (!isBeingDeleted(d)) await ops.release(set);
      continue;
    }
    if (!matches || isBeingDeleted(d) || isBeingDeleted(set)) continue;
    if (!ownerChecked) {
      if (!(await ops.ownerStillAdopts())) return undefined;
      ownerChecked = true;
    }
    const adopted = await ops.adopt(set);
    if (adopted) claimed.push(adopted);
  }
  return claimed;
}

/**
 * Maps a BasicReplicaSet event to the deployments that may want to adopt it (upstream
 * getDeploymentsForReplicaSet): none for a set that has a controller (the owner watch handles those),
 * else every deployment of its namespace whose selector matches its labels.
 */
export function deploymentsForOrphan(
  set: BasicReplicaSet,
  deploymentsIn: (namespace: string) => readonly BasicDeployment[],
): BasicDeployment[] {
  if (controllerRefOf(set)) return [];
  const labels = set.metadata.labels;
  return deploymentsIn(set.metadata.namespace ?? '').filter(
    (d) => selectsAnything(d.spec.selector) && selectorMatches(d.spec.selector, labels),
  );
}
