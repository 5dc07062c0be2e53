// The PodMachine's status, computed from what the controller observed (pure). It carries the
// Machine infrastructure contract's fields (docs/contracts.md): readiness (`ready` and the `Ready`
// condition with observedGeneration), `providerID`, `addresses`, `volumes`, `copyAs`, `stopped`,
// and `failureReason`/`failureMessage` for terminal failures only.
import type {
  InfrastructureAddress,
  InfrastructureCopyAs,
  MachinePhase,
  MachineVolumeStatus,
  PodMachineStatus,
} from '../../apis/index.ts';
import {
  boundedConditionMessage,
  type ConditionInput,
  READY,
  STALLED,
  setCondition,
  setStalled,
} from '../../runtime/write/conditions.ts';
import type { RestoreState } from './logic/restore.ts';

export const VOLUMES_READY = 'VolumesReady';
const CONDITION_TYPES: readonly string[] = [READY, VOLUMES_READY, STALLED];

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
  /** Why a Running pod is not Ready: its container's state, the probe it has not passed. */
  unready?: string;
  /** Why a Pending pod does not run yet, when its status says (a missing Secret, an image, the scheduler). */
  pending?: string;
  /** The pod's IPs (InternalIP); empty while it has none. */
  addresses: InfrastructureAddress[];
  /** Why the pod failed, when its phase is Failed or Succeeded. */
  failure?: string;
  conflict?: string;
  /** The API server refused to create the pod (admission, quota, validation): its message. */
  refused?: string;
}

export interface PodMachineObservations {
  namespace: string;
  generation?: number;
  /** The annotation infra.basicoperator.dev/stop-requested is "true". */
  stopRequested: boolean;
  /** After a stop request: the pod and every restore Job still copying are gone (read live). */
  stopped: boolean;
  volumes: VolumeObservation[];
  pod: PodObservation;
  /** Whom the pod runs as (copyIdentityOf its podSecurityContext); undefined when it runs as root. */
  copyAs?: InfrastructureCopyAs;
}

interface Verdict {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

const BUSY_RESTORES: ReadonlySet<RestoreState['kind']> = new Set(['start-job', 'restoring', 'verified']);

function describeClaim(v: VolumeObservation): string {
  return `${v.claimName} (${v.claimPhase ?? 'not created'})`;
}

function claimConflict(volumes: readonly VolumeObservation[]): Verdict | undefined {
  const conflict = volumes.find((v) => v.conflict !== undefined);
  return conflict?.conflict !== undefined
    ? { status: 'False', reason: 'ClaimConflict', message: conflict.conflict }
    : undefined;
}

function restoreFailure(volumes: readonly VolumeObservation[]): Verdict | undefined {
  for (const v of volumes) {
    if (v.restore.kind === 'failed')
      return { status: 'False', reason: v.restore.reason, message: v.restore.message };
  }
  return undefined;
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

/** VolumesReady: every claim exists, is Bound, and holds its restored data if it restores one. */
export function volumesVerdict(volumes: readonly VolumeObservation[]): Verdict {
  const failed = claimConflict(volumes) ?? restoreFailure(volumes) ?? claimRefusal(volumes);
  if (failed) return failed;
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
    message:
      volumes.length === 0 ? 'the PodMachine has no volumes' : `all ${volumes.length} claims are bound`,
  };
}

/**
 * A terminal failure: nothing the controller retries will fix it, a person has to act (delete the
 * failed pod or restore Job, remove the foreign object, fix the backup). The contract's
 * failureReason. Once the cause is gone the next reconcile finds none and the failure is cleared.
 * A stop request supersedes it: the compute is going away anyway.
 */
export function terminalFailure(obs: PodMachineObservations): Verdict | undefined {
  if (obs.stopRequested) return undefined;
  const claim = claimConflict(obs.volumes);
  if (claim) return claim;
  if (obs.pod.conflict) return { status: 'False', reason: 'PodConflict', message: obs.pod.conflict };
  const restore = restoreFailure(obs.volumes);
  if (restore) return restore;
  const pod = obs.pod;
  if (pod.exists && !pod.terminating && (pod.phase === 'Failed' || pod.phase === 'Succeeded')) {
    return {
      status: 'False',
      reason: 'PodFailed',
      message: `pod ${pod.name} has ${pod.phase === 'Failed' ? 'failed' : 'exited'}: ${pod.failure ?? 'no reason given'}; delete the pod to start a new one`,
    };
  }
  return undefined;
}

/** A create the API server refused (quota, Pod Security, a webhook): transient, retried with backoff. */
export function refusal(obs: PodMachineObservations): Verdict | undefined {
  if (obs.stopRequested) return undefined;
  const claim = claimRefusal(obs.volumes);
  if (claim) return claim;
  if (obs.pod.refused === undefined) return undefined;
  return {
    status: 'False',
    reason: 'PodRefused',
    message: `the API server refused pod ${obs.pod.name}: ${obs.pod.refused}; retrying with backoff`,
  };
}

export function podMachinePhase(obs: PodMachineObservations): MachinePhase {
  if (obs.stopRequested) return obs.stopped ? 'Stopped' : 'Stopping';
  if (terminalFailure(obs)) return 'Failed';
  const waiting = obs.volumes.some((v) => v.restore.kind === 'waiting' || v.claimPhase !== 'Bound');
  if (waiting) return 'Pending';
  if (obs.pod.exists && !obs.pod.terminating && obs.pod.phase === 'Running') return 'Running';
  return 'Provisioning';
}

function readyVerdict(obs: PodMachineObservations, volumes: Verdict): Verdict {
  const pod = obs.pod;
  if (obs.stopRequested) {
    return obs.stopped
      ? {
          status: 'False',
          reason: 'Stopped',
          message: 'stop requested; the pod is gone, the claims are kept',
        }
      : { status: 'False', reason: 'Stopping', message: `stop requested; deleting pod ${pod.name}` };
  }
  const failure = terminalFailure(obs) ?? refusal(obs);
  if (failure) return failure;
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
    return {
      status: 'False',
      reason: 'PodPending',
      message: `pod ${pod.name} is ${pod.phase ?? 'Pending'}${pod.pending ? `: ${pod.pending}` : ''}`,
    };
  }
  if (!pod.ready) {
    return {
      status: 'False',
      reason: 'PodNotReady',
      message: `pod ${pod.name} is running but not ready${pod.unready ? `: ${pod.unready}` : ''}`,
    };
  }
  return { status: 'True', reason: 'PodReady', message: `pod ${pod.name} is running and ready` };
}

/** The contract's identifier of the compute: stable across the pod being recreated. */
export function providerID(namespace: string, pod: string): string {
  return `pod://${namespace}/${pod}`;
}

/**
 * The next status: phase, readiness, the contract's fields, and this controller's conditions (their
 * lastTransitionTime carried over from `current`). `providerID` is set once the pod exists and kept
 * from then on (it names the pod, so it does not change when the pod is recreated).
 */
export function computeStatus(
  current: PodMachineStatus | undefined,
  obs: PodMachineObservations,
  now: Date,
): PodMachineStatus {
  const volumesReady = volumesVerdict(obs.volumes);
  const ready = readyVerdict(obs, volumesReady);
  const failure = terminalFailure(obs);
  const withGeneration = (v: Verdict, type: string): ConditionInput => ({
    type,
    ...v,
    ...(obs.generation !== undefined ? { observedGeneration: obs.generation } : {}),
  });
  let conditions = setCondition(current?.conditions, withGeneration(volumesReady, VOLUMES_READY), now);
  conditions = setCondition(conditions, withGeneration(ready, READY), now);
  // The contract's failureReason is terminal: kstatus's Stalled says so to kubectl wait and Flux.
  conditions = setStalled(conditions, failure, obs.generation, now);
  const volumes: MachineVolumeStatus[] = obs.volumes.map((v) => ({
    name: v.name,
    claimName: v.claimName,
    ...(v.claimPhase !== undefined ? { phase: v.claimPhase } : {}),
  }));
  const id = obs.pod.exists ? providerID(obs.namespace, obs.pod.name) : current?.providerID;
  return {
    phase: podMachinePhase(obs),
    ready: ready.status === 'True',
    ...(id !== undefined ? { providerID: id } : {}),
    addresses: obs.pod.exists ? obs.pod.addresses : [],
    volumes,
    ...(obs.copyAs ? { copyAs: { ...obs.copyAs } } : {}),
    stopped: obs.stopRequested && obs.stopped,
    ...(failure
      ? { failureReason: failure.reason, failureMessage: boundedConditionMessage(failure.message) }
      : {}),
    ...(obs.generation !== undefined ? { observedGeneration: obs.generation } : {}),
    conditions: conditions.filter((c) => CONDITION_TYPES.includes(c.type)),
  };
}
