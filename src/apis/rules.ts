// The single list of cross-field rules. The CRD schemas embed each rule as CEL
// (x-kubernetes-validations) and validation.ts re-implements the same check in TypeScript with the
// same message, so the apiserver and the operator word a violation identically.
import { MAX_BASIC_DEPLOYMENT_NAME, REPLICA_SET_POD_LABEL } from './apps/v1alpha1/group.ts';
import { MACHINE_POD_FIELDS } from './infra/v1alpha1/pod-fields.ts';
import type { ValidationRule } from './json-schema.ts';

/** core/v1's limit on the total size of an object's annotations (TotalAnnotationSizeLimitB). */
export const TOTAL_ANNOTATION_BYTES = 256 * 1024;

// Pieces of the selector rule, named so the CEL below reads like the TypeScript in validation.ts.
const hasTemplateLabels = 'has(self.template.metadata) && has(self.template.metadata.labels)';
const templateLabels = 'self.template.metadata.labels';
const templateHasKey = (key: string): string => `(${hasTemplateLabels} && ${key} in ${templateLabels})`;

const matchLabelsHold =
  '!has(self.selector.matchLabels) || self.selector.matchLabels.all(k, ' +
  `${templateHasKey('k')} && ${templateLabels}[k] == self.selector.matchLabels[k])`;

const requirementHolds =
  `e.operator == 'In' ? ${templateHasKey('e.key')} && has(e.values) && ${templateLabels}[e.key] in e.values : ` +
  `e.operator == 'NotIn' ? !${templateHasKey('e.key')} || !has(e.values) || !(${templateLabels}[e.key] in e.values) : ` +
  `e.operator == 'Exists' ? ${templateHasKey('e.key')} : ` +
  `!${templateHasKey('e.key')}`;

const matchExpressionsHold = `!has(self.selector.matchExpressions) || self.selector.matchExpressions.all(e, ${requirementHolds})`;

const isZero = (field: string): string =>
  `(type(self.${field}) == int ? self.${field} == 0 : self.${field} == '0%')`;

/** The Machine's inline fields besides image: command, args, volumes and the pod fields. */
const INLINE_FIELDS = ['command', 'args', 'volumes', ...MACHINE_POD_FIELDS] as const;
/** `field` is set on both sides or neither, and the same (a transition rule on spec). */
const unchanged = (field: string): string =>
  `has(self.${field}) == has(oldSelf.${field}) && (!has(self.${field}) || self.${field} == oldSelf.${field})`;
/** Exactly one of `fields` is set. */
const exactlyOne = (fields: readonly string[]): string =>
  `[${fields.map((f) => `has(self.${f})`).join(', ')}].filter(x, x).size() == 1`;

export const RULES = {
  // On spec.selector of BasicDeployment and BasicReplicaSet.
  selectorNotEmpty: {
    rule:
      '(has(self.matchLabels) && size(self.matchLabels) > 0) || ' +
      '(has(self.matchExpressions) && size(self.matchExpressions) > 0)',
    message: 'selector must set matchLabels or matchExpressions',
  },
  selectorImmutable: {
    rule: 'self == oldSelf',
    message: 'selector is immutable',
  },
  // The operator marks the pods it manages with this label; a selector using it could never match
  // them (DoesNotExist) or would depend on it.
  selectorKeyNotReserved: {
    rule:
      `(!has(self.matchLabels) || !('${REPLICA_SET_POD_LABEL}' in self.matchLabels)) && ` +
      `(!has(self.matchExpressions) || self.matchExpressions.all(e, e.key != '${REPLICA_SET_POD_LABEL}'))`,
    message: `selector must not use the label ${REPLICA_SET_POD_LABEL}: the operator sets it on the pods it manages`,
  },
  // On spec.template.metadata.labels of BasicDeployment and BasicReplicaSet.
  templateLabelNotReserved: {
    rule: `!('${REPLICA_SET_POD_LABEL}' in self)`,
    message: `the label ${REPLICA_SET_POD_LABEL} is reserved: the operator sets it on the pods it manages`,
  },
  // On spec.template.metadata.annotations of BasicDeployment and BasicReplicaSet: every pod gets them,
  // and core/v1 refuses a pod whose annotations total more than 256 KiB. Counted in characters:
  // converting each value to bytes (bytes(v).size()) is estimated at 2.7 times a rule's cost budget.
  templateAnnotationsSize: {
    rule: `self.map(k, size(k) + size(self[k])).sum() <= ${TOTAL_ANNOTATION_BYTES}`,
    message: `annotations may total at most ${TOTAL_ANNOTATION_BYTES} characters, keys and values (core/v1 refuses pods whose annotations exceed 256 KiB): every pod gets them`,
  },
  // At the root of BasicDeployment: its BasicReplicaSets are named <name>-<pod-template-hash>. On
  // create only (a name never changes), so one stored before the rule still takes its status writes
  // and shows the operator's InvalidSpec.
  basicDeploymentNameLength: {
    rule: `oldSelf.hasValue() || self.metadata.name.size() <= ${MAX_BASIC_DEPLOYMENT_NAME}`,
    optionalOldSelf: true,
    message: `metadata.name may be at most ${MAX_BASIC_DEPLOYMENT_NAME} characters: the BasicReplicaSets are named <name>-<pod-template-hash> (up to 10 characters), and names stop at 253`,
  },
  // On each spec.selector.matchExpressions item.
  selectorRequirementValues: {
    rule: "self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : !has(self.values) || size(self.values) == 0",
    message: 'values must be non-empty for operators In and NotIn, and empty for Exists and DoesNotExist',
  },
  // On spec of BasicDeployment and BasicReplicaSet.
  selectorMatchesTemplate: {
    rule: `(${matchLabelsHold}) && (${matchExpressionsHold})`,
    message: 'selector does not match template labels',
    fieldPath: '.selector',
  },
  // On spec of BasicDeployment.
  progressDeadlineExceedsMinReady: {
    rule:
      '!has(self.progressDeadlineSeconds) || ' +
      'self.progressDeadlineSeconds > (has(self.minReadySeconds) ? self.minReadySeconds : 0)',
    message: 'progressDeadlineSeconds must be greater than minReadySeconds',
    fieldPath: '.progressDeadlineSeconds',
  },
  // On spec.strategy.rollingUpdate of BasicDeployment. An absent field defaults to 25%, so it is never zero.
  surgeOrUnavailableNonZero: {
    rule: `!(has(self.maxSurge) && has(self.maxUnavailable) && ${isZero('maxSurge')} && ${isZero('maxUnavailable')})`,
    message: 'maxSurge and maxUnavailable must not both be zero',
  },
  // On spec of Machine.
  machineImageOrInfrastructureRef: {
    rule: 'has(self.image) != has(self.infrastructureRef)',
    message: 'set exactly one of image (an inline Machine, realized as a PodMachine) and infrastructureRef',
  },
  // On spec of Machine.
  machineInlineFieldsNeedImage: {
    rule: `has(self.image) || (${INLINE_FIELDS.map((f) => `!has(self.${f})`).join(' && ')})`,
    message:
      'command, args, volumes and the pod fields (env, resources, probes, securityContext, ...) describe an inline Machine; with infrastructureRef they belong in the provider object',
  },
  // On spec of Machine: the PodMachine made from the inline fields is never rewritten.
  machineInlineImmutable: {
    rule: ['image', 'command', 'args'].map(unchanged).join(' && '),
    message:
      'image, command and args are immutable after creation: the PodMachine made from them is never rewritten',
  },
  // On spec of Machine: the PodMachine made from the pod fields is never rewritten.
  machinePodFieldsImmutable: {
    rule: MACHINE_POD_FIELDS.map(unchanged).join(' && '),
    message: `the pod fields (${MACHINE_POD_FIELDS.join(', ')}) are immutable after creation: the PodMachine made from them is never rewritten`,
  },
  // On spec.infrastructureRef of Machine.
  machineInfrastructureRefImmutable: {
    rule: 'self == oldSelf',
    message: 'infrastructureRef is immutable',
  },
  // On spec of Machine.
  machineVolumesImmutable: {
    rule: 'has(self.volumes) == has(oldSelf.volumes) && (!has(self.volumes) || self.volumes == oldSelf.volumes)',
    message: 'volumes are immutable after creation',
    fieldPath: '.volumes',
  },
  // On spec.volumes of Machine.
  machineMountPathsUnique: {
    rule: 'self.all(v, self.exists_one(w, w.mountPath == v.mountPath))',
    message: 'mountPath must be unique across volumes',
  },
  // On spec.volumes[*].size of Machine.
  machineVolumeSizePositive: {
    rule: "type(self) == int ? self > 0 : isQuantity(self) && quantity(self).isGreaterThan(quantity('0'))",
    message: 'size must be greater than zero',
  },
  // On spec.env[*] of Machine and PodMachine, as core/v1 validates an EnvVar.
  envValueOrValueFrom: {
    rule: '!has(self.valueFrom) || !has(self.value) || size(self.value) == 0',
    message: 'set value or valueFrom, not both',
  },
  // On spec.env[*].valueFrom.
  envValueFromExactlyOne: {
    rule: exactlyOne(['secretKeyRef', 'configMapKeyRef', 'fieldRef', 'resourceFieldRef']),
    message: 'valueFrom must set exactly one of secretKeyRef, configMapKeyRef, fieldRef and resourceFieldRef',
  },
  // On spec.envFrom[*].
  envFromExactlyOne: {
    rule: exactlyOne(['secretRef', 'configMapRef']),
    message: 'envFrom entries must set exactly one of secretRef and configMapRef',
  },
  // On spec.ports.
  portNamesUnique: {
    rule: 'self.all(p, !has(p.name) || self.exists_one(q, has(q.name) && q.name == p.name))',
    message: 'port names must be unique',
  },
  // On each probe of Machine and PodMachine.
  probeExactlyOneHandler: {
    rule: exactlyOne(['exec', 'httpGet', 'tcpSocket', 'grpc']),
    message: 'a probe must set exactly one of exec, httpGet, tcpSocket and grpc',
  },
  // On livenessProbe and startupProbe, as core/v1 validates them.
  probeSuccessThresholdOne: {
    rule: '!has(self.successThreshold) || self.successThreshold == 1',
    message: 'successThreshold must be 1 for liveness and startup probes',
  },
  // On each seccompProfile and appArmorProfile.
  localhostProfileWithLocalhost: {
    rule: "self.type == 'Localhost' ? has(self.localhostProfile) && size(self.localhostProfile) > 0 : !has(self.localhostProfile)",
    message: 'localhostProfile is required with type Localhost and must not be set with any other type',
  },
  // On readinessProbe, as core/v1 validates it.
  readinessProbeNoTerminationGrace: {
    rule: '!has(self.terminationGracePeriodSeconds)',
    message: 'terminationGracePeriodSeconds is not allowed on a readiness probe',
  },
  // On each toleration, as core/v1 validates it.
  tolerationEmptyKeyNeedsExists: {
    rule: "(has(self.key) && size(self.key) > 0) || (has(self.operator) && self.operator == 'Exists')",
    message: 'a toleration with an empty key must use operator Exists (it then tolerates every taint)',
  },
  tolerationSecondsOnlyNoExecute: {
    rule: "!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')",
    message: 'tolerationSeconds is allowed only with effect NoExecute',
  },
  tolerationExistsHasNoValue: {
    rule: "!has(self.operator) || self.operator != 'Exists' || !has(self.value) || size(self.value) == 0",
    message: 'a toleration with operator Exists must not set a value',
  },
  // On each node selector requirement of affinity (matchExpressions and matchFields).
  nodeSelectorRequirementValues: {
    rule:
      "self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : " +
      "self.operator in ['Gt', 'Lt'] ? has(self.values) && size(self.values) == 1 && self.values[0].matches('^-?[0-9]+$') : " +
      '!has(self.values) || size(self.values) == 0',
    message:
      'values must be non-empty for In and NotIn, a single integer for Gt and Lt, and empty for Exists and DoesNotExist',
  },
  // On spec of PodMachine: the Machine controller never writes it after creating it.
  podMachineSpecImmutable: {
    rule: 'self == oldSelf',
    message: 'spec is immutable',
  },
  // On spec of VolumeBackup.
  volumeBackupSpecImmutable: {
    rule: 'self == oldSelf',
    message: 'spec is immutable',
  },
  // On spec of VolumeBackup.
  volumeBackupMachineComplete: {
    rule: 'has(self.machineName) == has(self.machineUID)',
    message:
      'machineName and machineUID go together: set both for a backup of a Machine, or neither for a standalone backup',
  },
} as const satisfies Record<string, ValidationRule>;

export type RuleId = keyof typeof RULES;
