// The Machine's status, computed from what the controller observed (pure). The Machine controller
// owns `status` but shares `conditions`: it sends only the types in MACHINE_CONDITION_TYPES, and
// the runtime applies them as its own fields, leaving every other entry (the VolumeBackup
// controller's `VolumeBackup` condition) to its owner.
import type { MachinePhase, MachineStatus, MachineVolumeStatus } from '../../apis/index.ts';
import { type ConditionInput, setCondition } from '../../runtime/write/conditions.ts';
import type { RestoreState } from './restore.ts';

export const READY = 'Ready';
export const VOLUMES_READY = 'VolumesReady';
export const MACHINE_CONDITION_TYPES: readonly string[] = [READY, VOLUMES_READY];

export interface VolumeObservation {
  name: string;
  claimName: string;
  /** The claim's status.phase; undefined while the claim does not exist. */
  claimPhase?: string;
  /** Set when an object this controller does not control holds the claim's name. */
  conflict?: string;
  /** The API server refused to create the claim (quota, admission, validation): its message. */
  refused?: string;
  restore: RestoreState;
}

export interface PodObservation {
  name: string;
  exists: boolean;
  terminating: boolean;
  phase?: string;
  ready: boolean;
  /** Why the pod failed, when its phase is Failed or Succeeded. */
  failure?: string;
  conflict?: string;
  /** The API server refused to create the pod (admission, quota, validation): its message. */
  refused?: string;
}

export interface MachineObservations {
  generation?: number;
  deleting: boolean;
  /** During deletion: the pod (and any restore Job) is gone. */
  stopped: boolean;
  volumes: VolumeObservation[];
  pod: PodObservation;
  /** Set when the controller held back creating something it needs (see gate.ts). */
  waiting?: { reason: string; message: string };
}

interface Verdict {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

const BUSY_RESTORES: ReadonlySet<RestoreState['kind']> = new Set(['start-job', 'restoring', 'job-succeeded']);

function describeClaim(v: VolumeObservation): string {
  return `${v.claimName} (${v.claimPhase ?? 'not created'})`;
}

/** VolumesReady: every claim exists, is Bound, and holds its restored data if it restores one. */
export function volumesVerdict(volumes: readonly VolumeObservation[]): Verdict {
  const conflict = volumes.find((v) => v.conflict);
  if (conflict) return { status: 'False', reason: 'ClaimConflict', message: conflict.conflict! };
  const refused = claimRefusal(volumes);
  if (refused) return refused;
  for (const v of volumes) {
    if (v.restore.kind === 'failed')
      return { status: 'False', reason: v.restore.reason, message: v.restore.message };
  }
  for (const v of volumes) {
    if (v.restore.kind === 'waiting')
      return { status: 'False', reason: v.restore.reason, message: v.restore.message };
  }
  const unbound = volumes.filter((v) => v.claimPhase !== 'Bound');
  if (unbound.length > 0) {
    return {
      status: 'False',
      reason: 'ClaimsPending',
      message: `waiting for claims to bind: ${unbound.map(describeClaim).join(', ')}`,
    };
  }
  const restoring = volumes.filter((v) => BUSY_RESTORES.has(v.restore.kind));
  if (restoring.length > 0) {
    return {
      status: 'False',
      reason: 'Restoring',
      message: `restoring data into ${restoring.map((v) => v.claimName).join(', ')} before the pod starts`,
    };
  }
  return {
    status: 'True',
    reason: 'ClaimsBound',
    message: volumes.length === 0 ? 'the Machine has no volumes' : `all ${volumes.length} claims are bound`,
  };
}

function claimRefusal(volumes: readonly VolumeObservation[]): Verdict | undefined {
  const refused = volumes.find((v) => v.refused !== undefined);
  if (!refused) return undefined;
  return {
    status: 'False',
    reason: 'ClaimRefused',
    message: `the API server refused claim ${refused.claimName}: ${refused.refused}; retrying with backoff`,
  };
}

function failureOf(obs: MachineObservations): Verdict | undefined {
  const claimConflict = obs.volumes.find((v) => v.conflict);
  if (claimConflict) return { status: 'False', reason: 'ClaimConflict', message: claimConflict.conflict! };
  const claimRefused = claimRefusal(obs.volumes);
  if (claimRefused) return claimRefused;
  if (obs.pod.conflict) return { status: 'False', reason: 'PodConflict', message: obs.pod.conflict };
  if (obs.pod.refused !== undefined) {
    return {
      status: 'False',
      reason: 'PodRefused',
      message: `the API server refused pod ${obs.pod.name}: ${obs.pod.refused}; retrying with backoff`,
    };
  }
  for (const v of obs.volumes) {
    if (v.restore.kind === 'failed')
      return { status: 'False', reason: v.restore.reason, message: v.restore.message };
  }
  if (
    obs.pod.exists &&
    !obs.pod.terminating &&
    (obs.pod.phase === 'Failed' || obs.pod.phase === 'Succeeded')
  ) {
    return {
      status: 'False',
      reason: 'PodFailed',
      message: `pod ${obs.pod.name} has ${obs.pod.phase === 'Failed' ? 'failed' : 'exited'}: ${obs.pod.failure ?? 'no reason given'}; delete the pod to start a new one`,
    };
  }
  return undefined;
}

export function machinePhase(obs: MachineObservations): MachinePhase {
  if (obs.deleting) return obs.stopped ? 'Stopped' : 'Stopping';
  if (failureOf(obs)) return 'Failed';
  if (obs.waiting) return 'Pending';
  const waiting = obs.volumes.some((v) => v.restore.kind === 'waiting' || v.claimPhase !== 'Bound');
  if (waiting) return 'Pending';
  if (obs.pod.exists && !obs.pod.terminating && obs.pod.phase === 'Running') return 'Running';
  return 'Provisioning';
}

function readyVerdict(obs: MachineObservations, volumes: Verdict): Verdict {
  const pod = obs.pod;
  if (obs.deleting) {
    return obs.stopped
      ? {
          status: 'False',
          reason: 'Stopped',
          message: 'the Machine is being deleted; its pod is gone, its claims are kept',
        }
      : {
          status: 'False',
          reason: 'Stopping',
          message: `the Machine is being deleted; stopping pod ${pod.name}`,
        };
  }
  const failure = failureOf(obs);
  if (failure) return failure;
  if (obs.waiting) return { status: 'False', ...obs.waiting };
  if (volumes.status !== 'True')
    return { status: 'False', reason: 'VolumesNotReady', message: volumes.message };
  if (!pod.exists) return { status: 'False', reason: 'PodNotCreated', message: `creating pod ${pod.name}` };
  if (pod.terminating) {
    return {
      status: 'False',
      reason: 'PodTerminating',
      message: `pod ${pod.name} is terminating; a new one is created once it is gone`,
    };
  }
  if (pod.phase !== 'Running') {
    return { status: 'False', reason: 'PodPending', message: `pod ${pod.name} is ${pod.phase ?? 'Pending'}` };
  }
  if (!pod.ready)
    return { status: 'False', reason: 'PodNotReady', message: `pod ${pod.name} is running but not ready` };
  return { status: 'True', reason: 'PodReady', message: `pod ${pod.name} is running and ready` };
}

/**
 * The next status: phase, ready, per-volume claims, and this controller's conditions (their
 * lastTransitionTime carried over from `current`); other condition types are left out.
 */
export function computeMachineStatus(
  current: MachineStatus | undefined,
  obs: MachineObservations,
  now: Date,
): MachineStatus {
  const volumesReady = volumesVerdict(obs.volumes);
  const ready = readyVerdict(obs, volumesReady);
  const phase = machinePhase(obs);
  const withGeneration = (v: Verdict, type: string): ConditionInput => ({
    type,
    ...v,
    ...(obs.generation !== undefined ? { observedGeneration: obs.generation } : {}),
  });
  let conditions = setCondition(current?.conditions, withGeneration(volumesReady, VOLUMES_READY), now);
  conditions = setCondition(conditions, withGeneration(ready, READY), now);
  const volumes: MachineVolumeStatus[] = obs.volumes.map((v) => ({
    name: v.name,
    claimName: v.claimName,
    ...(v.claimPhase !== undefined ? { phase: v.claimPhase } : {}),
  }));
  return {
    phase,
    ready: ready.status === 'True',
    volumes,
    ...(obs.generation !== undefined ? { observedGeneration: obs.generation } : {}),
    conditions: conditions.filter((c) => MACHINE_CONDITION_TYPES.includes(c.type)),
  };
}
