// Validates our custom resources in-process: the CRD schema through ajv, then the CRD's CEL rules
// re-implemented in TypeScript with the messages from rules.ts. The operator uses the rule checks
// to report objects stored before a rule existed; tests use the validators on samples.
import { isDeepStrictEqual } from 'node:util';
import type { V1LabelSelector } from '@kubernetes/client-node';
import { codePointCount } from '../runtime/text-limits.ts';
import type { BasicDeployment } from './apps/v1alpha1/basicdeployment.ts';
import { BASIC_DEPLOYMENT } from './apps/v1alpha1/basicdeployment.ts';
import { basicDeploymentSchema } from './apps/v1alpha1/basicdeployment-schema.ts';
import type { BasicReplicaSet } from './apps/v1alpha1/basicreplicaset.ts';
import { BASIC_REPLICA_SET } from './apps/v1alpha1/basicreplicaset.ts';
import { basicReplicaSetSchema } from './apps/v1alpha1/basicreplicaset-schema.ts';
import { MAX_BASIC_DEPLOYMENT_NAME, REPLICA_SET_POD_LABEL } from './apps/v1alpha1/group.ts';
import type { IntOrString, PodTemplate } from './apps/v1alpha1/workload.ts';
import type { Machine, MachineVolume } from './infra/v1alpha1/machine.ts';
import { MACHINE } from './infra/v1alpha1/machine.ts';
import { machineSchema } from './infra/v1alpha1/machine-schema.ts';
import { MACHINE_POD_FIELDS } from './infra/v1alpha1/pod-fields.ts';
import type { PodMachine } from './infra/v1alpha1/podmachine.ts';
import { POD_MACHINE } from './infra/v1alpha1/podmachine.ts';
import { podMachineSchema } from './infra/v1alpha1/podmachine-schema.ts';
import type { VolumeBackup } from './infra/v1alpha1/volumebackup.ts';
import { VOLUME_BACKUP } from './infra/v1alpha1/volumebackup.ts';
import { volumeBackupSchema } from './infra/v1alpha1/volumebackup-schema.ts';
import type { JsonSchemaProps } from './json-schema.ts';
import type { ApiResource } from './meta.ts';
import { MAX_TEMPLATE_DEPTH, nestsDeeperThan } from './nesting.ts';
import { RULES, type RuleId, TOTAL_ANNOTATION_BYTES } from './rules.ts';
import { compileSchemaValidator, type SchemaValidator, type ValidationResult } from './schema-validator.ts';

export type { ValidationResult } from './schema-validator.ts';

// ---------------------------------------------------------------------------------------------
// The CEL rules, in TypeScript. Each returns true when the rule holds, like its CEL twin.

/** Whether `labels` satisfy every matchLabels entry and matchExpressions requirement of `selector`. */
export function selectorMatchesLabels(
  selector: V1LabelSelector,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  // Object.hasOwn: a label named "toString" must not be found on the prototype.
  const labelValue = (key: string): string | undefined =>
    labels !== undefined && Object.hasOwn(labels, key) ? labels[key] : undefined;
  const matchLabelsHold = Object.entries(selector.matchLabels ?? {}).every(
    ([key, value]) => labelValue(key) === value,
  );
  if (!matchLabelsHold) return false;
  return (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    const value = labelValue(key);
    switch (operator) {
      case 'In':
        return value !== undefined && values.includes(value);
      case 'NotIn':
        return value === undefined || !values.includes(value);
      case 'Exists':
        return value !== undefined;
      default:
        return value === undefined;
    }
  });
}

/** The selector does not use the operator's marker label (selectorKeyNotReserved). */
export function selectorKeyNotReserved(selector: V1LabelSelector): boolean {
  return (
    !Object.hasOwn(selector.matchLabels ?? {}, REPLICA_SET_POD_LABEL) &&
    (selector.matchExpressions ?? []).every((requirement) => requirement.key !== REPLICA_SET_POD_LABEL)
  );
}

/** The template labels do not carry the operator's marker label (templateLabelNotReserved). */
export function templateLabelNotReserved(labels: Readonly<Record<string, string>> | undefined): boolean {
  return !Object.hasOwn(labels ?? {}, REPLICA_SET_POD_LABEL);
}

/** The template's annotations fit core/v1's total (templateAnnotationsSize), counted in characters as CEL does. */
export function templateAnnotationsFit(annotations: Readonly<Record<string, string>> | undefined): boolean {
  let units = 0;
  for (const key in annotations) units += key.length + (annotations[key]?.length ?? 0);
  // UTF-16 units are never fewer than characters: only a total above the limit needs counting.
  if (units <= TOTAL_ANNOTATION_BYTES) return true;
  let total = 0;
  for (const key in annotations) total += codePointCount(key) + codePointCount(annotations[key] ?? '');
  return total <= TOTAL_ANNOTATION_BYTES;
}

/** The BasicReplicaSet names `<name>-<pod-template-hash>` stay within 253 (basicDeploymentNameLength). */
export function basicDeploymentNameFits(name: string | undefined): boolean {
  return (name ?? '').length <= MAX_BASIC_DEPLOYMENT_NAME;
}

export function selectorIsNotEmpty(selector: V1LabelSelector): boolean {
  return Object.keys(selector.matchLabels ?? {}).length > 0 || (selector.matchExpressions ?? []).length > 0;
}

function requirementValuesFitOperator(requirement: { operator: string; values?: string[] }): boolean {
  const count = requirement.values?.length ?? 0;
  return requirement.operator === 'In' || requirement.operator === 'NotIn' ? count > 0 : count === 0;
}

const isZero = (value: IntOrString): boolean => value === 0 || value === '0%';

/** False when both are zero: a rollout could then neither add nor remove a pod. */
export function surgeOrUnavailableNonZero(rollingUpdate: {
  maxSurge?: IntOrString;
  maxUnavailable?: IntOrString;
}): boolean {
  const { maxSurge, maxUnavailable } = rollingUpdate;
  return !(
    maxSurge !== undefined &&
    maxUnavailable !== undefined &&
    isZero(maxSurge) &&
    isZero(maxUnavailable)
  );
}

const QUANTITY_NUMBER = /^(\d+(\.\d*)?|\.\d+)/;

/** Whether a Machine volume size is above zero. Assumes the schema's quantity pattern already held. */
export function volumeSizeIsPositive(size: IntOrString): boolean {
  if (typeof size === 'number') return size > 0;
  // Suffixes and exponents scale a quantity but cannot change its sign.
  const number = QUANTITY_NUMBER.exec(size)?.[1];
  return number !== undefined && Number(number) > 0;
}

export function mountPathsAreUnique(volumes: readonly MachineVolume[]): boolean {
  return new Set(volumes.map((volume) => volume.mountPath)).size === volumes.length;
}

/** Equality of x-kubernetes-list-type: map lists keyed by name, which ignores order as CEL does. */
function sameListMap<T extends { name: string }>(
  a: readonly T[] | undefined,
  b: readonly T[] | undefined,
): boolean {
  const byName = (list: readonly T[] | undefined): T[] =>
    [...(list ?? [])].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  return (a === undefined) === (b === undefined) && isDeepStrictEqual(byName(a), byName(b));
}

// ---------------------------------------------------------------------------------------------
// Rule violations per kind, as "<field path>: <message>", the path being where the apiserver reports them.

const violation = (path: string, rule: RuleId): string => `${path}: ${RULES[rule].message}`;

/**
 * The operator's own check, which no schema can express (the pod spec keeps unknown fields): a
 * template nested deeper than any pod spec is refused before anything walks it.
 */
const TEMPLATE_TOO_DEEP = `spec.template: nested more than ${MAX_TEMPLATE_DEPTH} levels deep (no pod template nests more than 12); the operator does not process it`;

/**
 * The cache's objects are frozen, and a frozen spec never changes: its violations are worked out once.
 * A hostile tenant's template (256 KiB of annotations, nesting 99 deep) is then walked once per
 * version, not on every reconcile of its deployment and of each of its sets.
 */
const violationsOfFrozenSpec = new WeakMap<object, readonly string[]>();

function workloadViolations(spec: { selector: V1LabelSelector; template: PodTemplate }): string[] {
  const known = violationsOfFrozenSpec.get(spec);
  if (known !== undefined) return [...known];
  const found = findWorkloadViolations(spec);
  if (Object.isFrozen(spec)) violationsOfFrozenSpec.set(spec, found);
  return [...found];
}

function findWorkloadViolations(spec: { selector: V1LabelSelector; template: PodTemplate }): string[] {
  // First and alone: every other check and everything after validation walks the template.
  if (nestsDeeperThan(spec.template, MAX_TEMPLATE_DEPTH)) return [TEMPLATE_TOO_DEEP];
  const errors: string[] = [];
  if (!selectorIsNotEmpty(spec.selector)) errors.push(violation('spec.selector', 'selectorNotEmpty'));
  if (!selectorKeyNotReserved(spec.selector))
    errors.push(violation('spec.selector', 'selectorKeyNotReserved'));
  if (!templateLabelNotReserved(spec.template.metadata?.labels)) {
    errors.push(violation('spec.template.metadata.labels', 'templateLabelNotReserved'));
  }
  if (!templateAnnotationsFit(spec.template.metadata?.annotations)) {
    errors.push(violation('spec.template.metadata.annotations', 'templateAnnotationsSize'));
  }
  (spec.selector.matchExpressions ?? []).forEach((requirement, index) => {
    if (!requirementValuesFitOperator(requirement)) {
      errors.push(violation(`spec.selector.matchExpressions[${index}]`, 'selectorRequirementValues'));
    }
  });
  if (!selectorMatchesLabels(spec.selector, spec.template.metadata?.labels)) {
    errors.push(violation('spec.selector', 'selectorMatchesTemplate'));
  }
  return errors;
}

export function basicDeploymentRuleViolations(deployment: BasicDeployment): string[] {
  const { spec } = deployment;
  const errors = workloadViolations(spec);
  if (!basicDeploymentNameFits(deployment.metadata.name)) {
    errors.push(violation('metadata.name', 'basicDeploymentNameLength'));
  }
  if (
    spec.progressDeadlineSeconds !== undefined &&
    spec.progressDeadlineSeconds <= (spec.minReadySeconds ?? 0)
  ) {
    errors.push(violation('spec.progressDeadlineSeconds', 'progressDeadlineExceedsMinReady'));
  }
  const strategy = spec.strategy;
  if (strategy?.rollingUpdate && !surgeOrUnavailableNonZero(strategy.rollingUpdate)) {
    errors.push(violation('spec.strategy.rollingUpdate', 'surgeOrUnavailableNonZero'));
  }
  return errors;
}

export function basicReplicaSetRuleViolations(replicaSet: BasicReplicaSet): string[] {
  return workloadViolations(replicaSet.spec);
}

function volumeViolations(volumes: readonly MachineVolume[]): string[] {
  const errors: string[] = [];
  if (!mountPathsAreUnique(volumes)) errors.push(violation('spec.volumes', 'machineMountPathsUnique'));
  volumes.forEach((volume, index) => {
    if (!volumeSizeIsPositive(volume.size)) {
      errors.push(violation(`spec.volumes[${index}].size`, 'machineVolumeSizePositive'));
    }
  });
  return errors;
}

export function machineRuleViolations(machine: Machine): string[] {
  const { spec } = machine;
  const errors: string[] = [];
  if ((spec.image !== undefined) === (spec.infrastructureRef !== undefined)) {
    errors.push(violation('spec', 'machineImageOrInfrastructureRef'));
  }
  const inline =
    spec.command !== undefined ||
    spec.args !== undefined ||
    spec.volumes !== undefined ||
    MACHINE_POD_FIELDS.some((field) => spec[field] !== undefined);
  if (spec.image === undefined && inline) errors.push(violation('spec', 'machineInlineFieldsNeedImage'));
  return [...errors, ...volumeViolations(spec.volumes ?? [])];
}

export function podMachineRuleViolations(podMachine: PodMachine): string[] {
  return volumeViolations(podMachine.spec.volumes ?? []);
}

// Transition rules (oldSelf): only an update has them.

function workloadTransitionViolations(
  oldObject: { spec: { selector: V1LabelSelector } },
  newObject: { spec: { selector: V1LabelSelector } },
): string[] {
  return isDeepStrictEqual(oldObject.spec.selector, newObject.spec.selector)
    ? []
    : [violation('spec.selector', 'selectorImmutable')];
}

function machineTransitionViolations(oldMachine: Machine, newMachine: Machine): string[] {
  const errors: string[] = [];
  const { spec: before } = oldMachine;
  const { spec: after } = newMachine;
  if (
    !isDeepStrictEqual(before.image, after.image) ||
    !isDeepStrictEqual(before.command, after.command) ||
    !isDeepStrictEqual(before.args, after.args)
  ) {
    errors.push(violation('spec', 'machineInlineImmutable'));
  }
  if (MACHINE_POD_FIELDS.some((field) => !isDeepStrictEqual(before[field], after[field]))) {
    errors.push(violation('spec', 'machinePodFieldsImmutable'));
  }
  if (!sameListMap(before.volumes, after.volumes))
    errors.push(violation('spec.volumes', 'machineVolumesImmutable'));
  if (
    before.infrastructureRef !== undefined &&
    after.infrastructureRef !== undefined &&
    !isDeepStrictEqual(before.infrastructureRef, after.infrastructureRef)
  ) {
    errors.push(violation('spec.infrastructureRef', 'machineInfrastructureRefImmutable'));
  }
  return errors;
}

function podMachineTransitionViolations(oldObject: PodMachine, newObject: PodMachine): string[] {
  const { volumes: oldVolumes, ...oldRest } = oldObject.spec;
  const { volumes: newVolumes, ...newRest } = newObject.spec;
  return isDeepStrictEqual(oldRest, newRest) && sameListMap(oldVolumes, newVolumes)
    ? []
    : [violation('spec', 'podMachineSpecImmutable')];
}

function volumeBackupTransitionViolations(oldBackup: VolumeBackup, newBackup: VolumeBackup): string[] {
  const { volumes: oldVolumes, ...oldRest } = oldBackup.spec;
  const { volumes: newVolumes, ...newRest } = newBackup.spec;
  return isDeepStrictEqual(oldRest, newRest) && sameListMap(oldVolumes, newVolumes)
    ? []
    : [violation('spec', 'volumeBackupSpecImmutable')];
}

// ---------------------------------------------------------------------------------------------
// Validators: schema first; rules only run on objects whose shape the schema has confirmed.

interface KindValidation<T> {
  resource: ApiResource;
  schema: JsonSchemaProps;
  /** Rules that hold for any single object; absent when the kind only has transition rules. */
  rules?: (object: T) => string[];
  transitionRules: (oldObject: T, newObject: T) => string[];
}

function result(errors: string[]): ValidationResult {
  return errors.length === 0 ? { valid: true } : { valid: false, errors };
}

function kindValidators<T>(kind: KindValidation<T>): {
  validate: (object: unknown) => ValidationResult;
  validateUpdate: (oldObject: T, newObject: unknown) => ValidationResult;
} {
  let schemaValidator: SchemaValidator | undefined;
  const validate = (object: unknown): ValidationResult => {
    schemaValidator ??= compileSchemaValidator(kind.schema, kind.resource);
    const schemaResult = schemaValidator(object);
    return schemaResult.valid ? result(kind.rules?.(object as T) ?? []) : schemaResult;
  };
  const validateUpdate = (oldObject: T, newObject: unknown): ValidationResult => {
    const created = validate(newObject);
    return created.valid ? result(kind.transitionRules(oldObject, newObject as T)) : created;
  };
  return { validate, validateUpdate };
}

const basicDeployment = kindValidators<BasicDeployment>({
  resource: BASIC_DEPLOYMENT,
  schema: basicDeploymentSchema,
  rules: basicDeploymentRuleViolations,
  transitionRules: workloadTransitionViolations,
});
const basicReplicaSet = kindValidators<BasicReplicaSet>({
  resource: BASIC_REPLICA_SET,
  schema: basicReplicaSetSchema,
  rules: basicReplicaSetRuleViolations,
  transitionRules: workloadTransitionViolations,
});
const machine = kindValidators<Machine>({
  resource: MACHINE,
  schema: machineSchema,
  rules: machineRuleViolations,
  transitionRules: machineTransitionViolations,
});
const podMachine = kindValidators<PodMachine>({
  resource: POD_MACHINE,
  schema: podMachineSchema,
  rules: podMachineRuleViolations,
  transitionRules: podMachineTransitionViolations,
});
function volumeBackupRuleViolations(backup: VolumeBackup): string[] {
  const { machineName, machineUID } = backup.spec;
  return (machineName === undefined) === (machineUID === undefined)
    ? []
    : [violation('spec', 'volumeBackupMachineComplete')];
}

const volumeBackup = kindValidators<VolumeBackup>({
  resource: VOLUME_BACKUP,
  schema: volumeBackupSchema,
  rules: volumeBackupRuleViolations,
  transitionRules: volumeBackupTransitionViolations,
});

/** Schema and CEL-rule checks of a BasicDeployment as a create would see them. */
export const validateBasicDeployment = basicDeployment.validate;
/** validateBasicDeployment plus the immutability rules, against the stored object. */
export const validateBasicDeploymentUpdate = basicDeployment.validateUpdate;
export const validateBasicReplicaSet = basicReplicaSet.validate;
export const validateBasicReplicaSetUpdate = basicReplicaSet.validateUpdate;
export const validateMachine = machine.validate;
export const validateMachineUpdate = machine.validateUpdate;
export const validatePodMachine = podMachine.validate;
export const validatePodMachineUpdate = podMachine.validateUpdate;
export const validateVolumeBackup = volumeBackup.validate;
export const validateVolumeBackupUpdate = volumeBackup.validateUpdate;
