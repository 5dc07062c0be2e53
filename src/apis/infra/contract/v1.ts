// The Machine infrastructure contract, version v1 (docs/contracts.md): the names a provider and the
// Machine controller agree on, and the reading of a provider object by field path. Nothing here
// knows any provider's types.
import type { Condition } from '../../meta.ts';

export const CONTRACT_VERSION = 'v1';

/**
 * On a provider's CRD: its API versions that implement contract v1, "_"-separated
 * (`machine-contract.infra.basicoperator.dev/v1: v1alpha1`).
 */
export const CONTRACT_LABEL = `machine-contract.infra.basicoperator.dev/${CONTRACT_VERSION}`;

/** Set by the Machine controller on a provider object, value "true": stop the compute, keep the volumes. */
export const STOP_REQUESTED_ANNOTATION = 'infra.basicoperator.dev/stop-requested';

/**
 * On a provider object without a controller, set by whoever made it, value the name of a Machine in
 * its namespace: that Machine may take it over through `spec.infrastructureRef`. The Machine
 * controller removes the annotation in the patch that makes the Machine its controller, so the grant
 * is used once. An object without it is never adopted: a Machine names objects, it does not prove
 * they are its user's.
 */
export const ADOPTABLE_BY_ANNOTATION = 'infra.basicoperator.dev/adoptable-by';

/**
 * On a PodMachine the Machine controller created, value that Machine's uid: the PodMachine takes over
 * the children of its controller owner (an operator from before PodMachines made them) only when
 * that owner is the Machine that created it.
 */
export const CREATED_FOR_ANNOTATION = 'infra.basicoperator.dev/created-for';

/** Held by the Machine controller on every Machine until its provider object is gone. */
export const MACHINE_FINALIZER = 'infra.basicoperator.dev/machine';

/**
 * On a ClusterRole, value "true": its rules are aggregated into the operator's, so the Machine
 * controller may read, own and delete a provider's kind.
 */
export const AGGREGATE_TO_MANAGER_LABEL = 'infra.basicoperator.dev/aggregate-to-manager';

/** `apiVersion`, `kind` and `name` of a provider object, in the Machine's namespace. */
export interface InfrastructureReference {
  apiVersion: string;
  kind: string;
  name: string;
  /** Not allowed to differ from the Machine's namespace; kept so a wrong one can be reported. */
  namespace?: string;
}

export interface InfrastructureAddress {
  type: string;
  address: string;
}

export interface InfrastructureVolume {
  name: string;
  claimName: string;
  phase?: string;
}

/**
 * Whom the workload's pod runs as: a copy of its volumes that may not run as root (Pod Security
 * `restricted`) runs as this user and group, with this fsGroup, so it may read and write the
 * workload's files. Same shape and bounds as a VolumeBackup's `spec.copyAs`.
 */
export interface InfrastructureCopyAs {
  /** 1 to MAX_COPY_AS_ID: never root (a provider whose pod runs as root reports no copyAs). */
  runAsUser: number;
  /** 0 to MAX_COPY_AS_ID. */
  runAsGroup: number;
  /** 0 to MAX_COPY_AS_ID; absent when the pod has none. */
  fsGroup?: number;
}

/** The largest user or group id the contract takes (Kubernetes' own bound: int32). */
export const MAX_COPY_AS_ID = 2147483647;

/** What the contract lets the Machine controller read from a provider object. */
export interface InfrastructureView {
  /** The provider's readiness for the object's current generation. */
  ready: boolean;
  /** Reason and message of the Ready condition, when the provider reports one. */
  reason?: string;
  message?: string;
  /** A terminal failure: the provider will not get the object ready without a change by a person. */
  failure?: { reason: string; message: string };
  providerID?: string;
  addresses?: InfrastructureAddress[];
  /** Undefined when the provider reports no volume list (then it has none to back up). */
  volumes?: InfrastructureVolume[];
  /** Undefined when the provider does not say whom its pod runs as (copies then run as 65532). */
  copyAs?: InfrastructureCopyAs;
  /** True once, after a stop request, no compute runs and the claims are kept. */
  stopped: boolean;
}

/** A provider object's status broke the contract: which field, and how. */
export interface ContractViolation {
  violation: string;
}

/** The part of any Kubernetes object the contract reads, without a provider's types. */
export interface UnstructuredObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    generation?: number;
    annotations?: Record<string, string>;
  };
  status?: unknown;
  [field: string]: unknown;
}

type Fields = Record<string, unknown>;

const isFields = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads a provider object by the contract's field paths. Absent optional fields are fine; a field of
 * the wrong type is a violation (named by its path), never a guess.
 */
export function readInfrastructure(obj: UnstructuredObject): InfrastructureView | ContractViolation {
  const status = obj.status ?? {};
  if (!isFields(status)) return { violation: 'status must be an object' };
  const view: InfrastructureView = { ready: false, stopped: false };

  const conditions = status.conditions;
  if (conditions !== undefined && !Array.isArray(conditions)) {
    return { violation: 'status.conditions must be a list' };
  }
  const readyCondition = (conditions ?? []).find((c): c is Condition => isFields(c) && c.type === 'Ready');
  if (readyCondition) {
    if (!['True', 'False', 'Unknown'].includes(readyCondition.status)) {
      return { violation: 'status.conditions[type=Ready].status must be True, False or Unknown' };
    }
    const generation = obj.metadata?.generation;
    const observed = readyCondition.observedGeneration;
    const current = observed === undefined || generation === undefined || observed >= generation;
    view.ready = current && readyCondition.status === 'True';
    if (typeof readyCondition.reason === 'string') view.reason = readyCondition.reason;
    if (typeof readyCondition.message === 'string') view.message = readyCondition.message;
    if (!current) {
      view.reason = 'GenerationNotObserved';
      view.message = `the provider has not observed generation ${generation} yet (its Ready condition is for ${observed})`;
    }
  } else if (status.ready !== undefined) {
    if (typeof status.ready !== 'boolean') return { violation: 'status.ready must be a boolean' };
    view.ready = status.ready;
  }

  const failureReason = status.failureReason;
  const failureMessage = status.failureMessage;
  if (failureReason !== undefined && typeof failureReason !== 'string') {
    return { violation: 'status.failureReason must be a string' };
  }
  if (failureMessage !== undefined && typeof failureMessage !== 'string') {
    return { violation: 'status.failureMessage must be a string' };
  }
  if (failureReason || failureMessage) {
    view.failure = { reason: failureReason || 'Failed', message: failureMessage ?? '' };
  }

  if (status.providerID !== undefined) {
    if (typeof status.providerID !== 'string') return { violation: 'status.providerID must be a string' };
    view.providerID = status.providerID;
  }

  if (status.addresses !== undefined) {
    if (!Array.isArray(status.addresses)) return { violation: 'status.addresses must be a list' };
    const addresses: InfrastructureAddress[] = [];
    for (const [i, a] of status.addresses.entries()) {
      if (!isFields(a) || typeof a.type !== 'string' || typeof a.address !== 'string') {
        return { violation: `status.addresses[${i}] must have string fields type and address` };
      }
      addresses.push({ type: a.type, address: a.address });
    }
    view.addresses = addresses;
  }

  if (status.volumes !== undefined) {
    if (!Array.isArray(status.volumes)) return { violation: 'status.volumes must be a list' };
    const volumes: InfrastructureVolume[] = [];
    for (const [i, v] of status.volumes.entries()) {
      if (
        !isFields(v) ||
        typeof v.name !== 'string' ||
        typeof v.claimName !== 'string' ||
        !v.name ||
        !v.claimName
      ) {
        return { violation: `status.volumes[${i}] must have non-empty string fields name and claimName` };
      }
      if (v.phase !== undefined && typeof v.phase !== 'string') {
        return { violation: `status.volumes[${i}].phase must be a string` };
      }
      volumes.push({
        name: v.name,
        claimName: v.claimName,
        ...(v.phase !== undefined ? { phase: v.phase } : {}),
      });
    }
    view.volumes = volumes;
  }

  if (status.copyAs !== undefined) {
    const copyAs = readCopyAs(status.copyAs);
    if (typeof copyAs === 'string') return { violation: copyAs };
    view.copyAs = copyAs;
  }

  if (status.stopped !== undefined) {
    if (typeof status.stopped !== 'boolean') return { violation: 'status.stopped must be a boolean' };
    view.stopped = status.stopped;
  }
  return view;
}

const isId = (value: unknown, minimum: number): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= minimum && value <= MAX_COPY_AS_ID;

/** status.copyAs, or what is wrong with it. */
function readCopyAs(value: unknown): InfrastructureCopyAs | string {
  if (!isFields(value)) return 'status.copyAs must be an object';
  const { runAsUser, runAsGroup, fsGroup } = value;
  if (!isId(runAsUser, 1)) {
    return `status.copyAs.runAsUser must be an integer from 1 to ${MAX_COPY_AS_ID} (a pod that runs as root reports no copyAs), not ${JSON.stringify(runAsUser)}`;
  }
  if (!isId(runAsGroup, 0)) {
    return `status.copyAs.runAsGroup must be an integer from 0 to ${MAX_COPY_AS_ID}, not ${JSON.stringify(runAsGroup)}`;
  }
  if (fsGroup !== undefined && !isId(fsGroup, 0)) {
    return `status.copyAs.fsGroup must be an integer from 0 to ${MAX_COPY_AS_ID} when set, not ${JSON.stringify(fsGroup)}`;
  }
  return { runAsUser, runAsGroup, ...(fsGroup !== undefined ? { fsGroup } : {}) };
}

/**
 * What a provider reports as copyAs for a pod of this identity: the identity, or nothing when an id
 * is beyond the contract's bounds (a pod with such an id is refused by the API server anyway, and the
 * status must still be written to say so).
 */
export function reportableCopyAs(
  identity: InfrastructureCopyAs | undefined,
): InfrastructureCopyAs | undefined {
  if (identity === undefined) return undefined;
  const read = readCopyAs(identity);
  return typeof read === 'string' ? undefined : read;
}

export function isViolation(read: InfrastructureView | ContractViolation): read is ContractViolation {
  return 'violation' in read;
}

/** The provider's API versions that implement contract v1, from its CRD's labels (empty: none). */
export function contractVersions(crdLabels: Record<string, string> | undefined): string[] {
  const value = crdLabels?.[CONTRACT_LABEL];
  return value ? value.split('_').filter(Boolean) : [];
}

/** Whether a stop was requested on a provider object (by the Machine controller). */
export function stopRequested(obj: { metadata?: { annotations?: Record<string, string> } }): boolean {
  return obj.metadata?.annotations?.[STOP_REQUESTED_ANNOTATION] === 'true';
}
