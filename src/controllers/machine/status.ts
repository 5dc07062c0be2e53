// The Machine's status, computed from what the controller found out about its provider object
// (pure). The Machine controller owns `status` but shares `conditions`: it sends only the types in
// MACHINE_CONDITION_TYPES, and the runtime applies them as its own fields, leaving every other entry
// (the machine-backup controller's `VolumeBackup` condition) to its owner.
import type {
  InfrastructureReference,
  InfrastructureView,
  MachinePhase,
  MachineStatus,
} from '../../apis/index.ts';
import {
  type ConditionInput,
  isValidConditionReason,
  READY,
  STALLED,
  setCondition,
  setStalled,
} from '../../runtime/write/conditions.ts';
import { WAITING_FOR_BACKUP_FINALIZER } from './logic/gate.ts';

export const INFRASTRUCTURE_READY = 'InfrastructureReady';
export const MACHINE_CONDITION_TYPES: readonly string[] = [INFRASTRUCTURE_READY, READY, STALLED];

/** Reasons of InfrastructureReady for a provider object the controller cannot use as it is. */
export type ProblemReason =
  | 'InfrastructureNotFound'
  | 'ContractNotDeclared'
  | 'CrossNamespaceReference'
  | 'InfrastructureOwnedByOther'
  | 'InfrastructureNotAdoptable'
  | 'ContractViolation'
  | 'InfrastructureForbidden';

export const INFRASTRUCTURE_FAILED = 'InfrastructureFailed';
/** InfrastructureReady's reason while the provider is not ready and gives no reason of its own. */
export const WAITING_FOR_INFRASTRUCTURE = 'WaitingForInfrastructure';

/** Reasons that are bad input or a failure: each change to one of them is also a Warning Event. */
export const WARNING_REASONS: ReadonlySet<string> = new Set<string>([
  'InfrastructureNotFound',
  'ContractNotDeclared',
  'CrossNamespaceReference',
  'InfrastructureOwnedByOther',
  'InfrastructureNotAdoptable',
  'ContractViolation',
  'InfrastructureForbidden',
  INFRASTRUCTURE_FAILED,
]);

/** What a reconcile found out about the Machine's provider object. */
export type Infrastructure =
  /** Creation waits for the machine-backup controller's finalizer (logic/gate.ts). */
  | { kind: 'blocked'; message: string }
  | { kind: 'problem'; reason: ProblemReason; message: string }
  /** The provider object, read through the contract; `name` is how messages name it ("PodMachine web"). */
  | { kind: 'provider'; name: string; view: InfrastructureView }
  /** During deletion: there is no provider object of this Machine (any more), for this reason. */
  | { kind: 'absent'; message: string };

export interface MachineObservation {
  generation?: number;
  /** The provider object in use, for status.infrastructureRef, once there is one. */
  ref?: InfrastructureReference;
  infrastructure: Infrastructure;
  /** Set while the Machine is being deleted: whether its provider stopped, and what it waits for. */
  deleting?: { stopped: boolean; message: string };
}

interface Verdict {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** The provider's own reason where the API server would take it (a CamelCase metav1 reason). */
function providerReason(reason: string | undefined, fallback: string): string {
  return reason && isValidConditionReason(reason) ? reason : fallback;
}

/** InfrastructureReady: the provider's readiness, reason and message, or why it cannot be had. */
export function infrastructureVerdict(infrastructure: Infrastructure): Verdict {
  switch (infrastructure.kind) {
    case 'blocked':
      return { status: 'False', reason: WAITING_FOR_BACKUP_FINALIZER, message: infrastructure.message };
    case 'problem':
      return { status: 'False', reason: infrastructure.reason, message: infrastructure.message };
    case 'absent':
      return { status: 'False', reason: 'InfrastructureDeleted', message: infrastructure.message };
    case 'provider': {
      const { name, view } = infrastructure;
      if (view.failure) {
        return {
          status: 'False',
          reason: INFRASTRUCTURE_FAILED,
          message: `${name} failed: ${view.failure.reason}${view.failure.message ? `: ${view.failure.message}` : ''}`,
        };
      }
      if (view.ready) {
        return {
          status: 'True',
          reason: providerReason(view.reason, INFRASTRUCTURE_READY),
          message: `${name}: ${view.message || 'ready'}`,
        };
      }
      return {
        status: 'False',
        reason: providerReason(view.reason, WAITING_FOR_INFRASTRUCTURE),
        message: `${name}: ${view.message || 'not ready yet'}`,
      };
    }
  }
}

export function machinePhase(obs: MachineObservation): MachinePhase {
  if (obs.deleting) return obs.deleting.stopped ? 'Stopped' : 'Stopping';
  const infrastructure = obs.infrastructure;
  switch (infrastructure.kind) {
    case 'blocked':
    case 'absent':
      return 'Pending';
    case 'problem':
      return infrastructure.reason === 'InfrastructureNotFound' ? 'Pending' : 'Failed';
    case 'provider':
      if (infrastructure.view.failure) return 'Failed';
      return infrastructure.view.ready ? 'Running' : 'Provisioning';
  }
}

function readyVerdict(obs: MachineObservation, infrastructure: Verdict): Verdict {
  if (obs.deleting) {
    return {
      status: 'False',
      reason: obs.deleting.stopped ? 'Stopped' : 'Stopping',
      message: obs.deleting.message,
    };
  }
  if (infrastructure.status === 'True') {
    return { status: 'True', reason: INFRASTRUCTURE_READY, message: infrastructure.message };
  }
  return infrastructure;
}

/**
 * The next status: phase, ready, the provider object in use, the contract's copies (providerID,
 * addresses, volumes, copyAs), and this controller's conditions (their lastTransitionTime carried
 * over from `current`); other condition types are left out. Without a provider object to read, the
 * volumes and copyAs last copied are kept: they name the claims a backup copies after the provider
 * object is gone, and whom the copies run as.
 */
export function computeStatus(
  current: MachineStatus | undefined,
  obs: MachineObservation,
  now: Date,
): MachineStatus {
  const infrastructure = infrastructureVerdict(obs.infrastructure);
  const ready = readyVerdict(obs, infrastructure);
  const withGeneration = (v: Verdict, type: string): ConditionInput => ({
    type,
    ...v,
    ...(obs.generation !== undefined ? { observedGeneration: obs.generation } : {}),
  });
  let conditions = setCondition(
    current?.conditions,
    withGeneration(infrastructure, INFRASTRUCTURE_READY),
    now,
  );
  conditions = setCondition(conditions, withGeneration(ready, READY), now);
  const phase = machinePhase(obs);
  // Phase Failed waits for a person (a provider's terminal failure, a reference the controller may
  // not follow): kstatus's Stalled, with InfrastructureReady's reason.
  conditions = setStalled(conditions, phase === 'Failed' ? infrastructure : undefined, obs.generation, now);
  const view = obs.infrastructure.kind === 'provider' ? obs.infrastructure.view : undefined;
  const volumes = view ? view.volumes : current?.volumes;
  const copyAs = view ? view.copyAs : current?.copyAs;
  return {
    phase,
    ready: ready.status === 'True',
    ...(obs.ref ? { infrastructureRef: { ...obs.ref } } : {}),
    ...(view?.providerID !== undefined ? { providerID: view.providerID } : {}),
    ...(view?.addresses !== undefined ? { addresses: view.addresses.map((a) => ({ ...a })) } : {}),
    ...(volumes !== undefined ? { volumes: volumes.map((v) => ({ ...v })) } : {}),
    ...(copyAs !== undefined ? { copyAs: { ...copyAs } } : {}),
    ...(obs.generation !== undefined ? { observedGeneration: obs.generation } : {}),
    conditions: conditions.filter((c) => MACHINE_CONDITION_TYPES.includes(c.type)),
  };
}
