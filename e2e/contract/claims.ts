// What the deletion handshake checks about claims and the pods that mount them (pure: given lists).
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { InfrastructureVolume } from '../../src/apis/infra/contract/index.ts';

/** A pod that still runs with one or more of the claims mounted. */
export interface ClaimInUse {
  pod: string;
  phase: string;
  terminating: boolean;
  claims: string[];
}

/**
 * Pods that may still write to any of `claimNames`: every pod that mounts one of them and has not
 * finished (phase Succeeded or Failed). A pod being deleted counts: its containers run until the
 * kubelet has stopped them, and the object is removed only then.
 */
export function podsUsingClaims(pods: readonly V1Pod[], claimNames: ReadonlySet<string>): ClaimInUse[] {
  const inUse: ClaimInUse[] = [];
  for (const pod of pods) {
    const phase = pod.status?.phase ?? 'Pending';
    if (phase === 'Succeeded' || phase === 'Failed') continue;
    const claims = (pod.spec?.volumes ?? [])
      .map((v) => v.persistentVolumeClaim?.claimName)
      .filter((name): name is string => name !== undefined && claimNames.has(name));
    if (claims.length === 0) continue;
    inUse.push({
      pod: pod.metadata?.name ?? '',
      phase,
      terminating: pod.metadata?.deletionTimestamp != null,
      claims: [...new Set(claims)].sort(),
    });
  }
  return inUse;
}

export function describeClaimsInUse(inUse: readonly ClaimInUse[]): string {
  return inUse
    .map(
      (u) => `pod ${u.pod} (${u.phase}${u.terminating ? ', terminating' : ''}) mounts ${u.claims.join(', ')}`,
    )
    .join('; ');
}

/** Claims of `claimNames` that are gone from `claims` or being deleted, each with what was seen. */
export function claimsNotKept(
  claimNames: ReadonlySet<string>,
  claims: readonly V1PersistentVolumeClaim[],
): string[] {
  const byName = new Map(claims.map((c) => [c.metadata?.name ?? '', c]));
  const problems: string[] = [];
  for (const name of [...claimNames].sort()) {
    const claim = byName.get(name);
    if (!claim) problems.push(`claim ${name} is gone`);
    else if (claim.metadata?.deletionTimestamp != null) problems.push(`claim ${name} is being deleted`);
  }
  return problems;
}

/** Volumes reported before (at readiness) that the status reports no more, or with another claim. */
export function volumesDropped(
  before: readonly InfrastructureVolume[],
  after: readonly InfrastructureVolume[],
): string[] {
  const now = new Map(after.map((v) => [v.name, v.claimName]));
  const problems: string[] = [];
  for (const v of before) {
    const claimName = now.get(v.name);
    if (claimName === undefined)
      problems.push(`status.volumes no longer lists ${v.name} (claim ${v.claimName})`);
    else if (claimName !== v.claimName) {
      problems.push(`status.volumes now gives ${v.name} the claim ${claimName}, not ${v.claimName}`);
    }
  }
  return problems;
}

/** Every claim named by any of the volume lists. */
export function claimNamesOf(
  ...lists: readonly (readonly InfrastructureVolume[] | undefined)[]
): Set<string> {
  return new Set(lists.flatMap((list) => (list ?? []).map((v) => v.claimName)));
}
