/**
 * The abstract workload both sides are built from: one spec, mapped to an apps/v1 Deployment and to a
 * BasicDeployment by sides.ts. Operations change this model; each side then gets the mapped object.
 */

export type IntOrPercent = number | `${number}%`;

export interface TemplateModel {
  image: string;
  /** Pods of this template never become Ready (a kwok stage keyed on NEVER_READY_ANNOTATION). */
  neverReady: boolean;
  /** Template labels beyond the selector's (app.kubernetes.io/* keys). */
  extraLabels: Record<string, string>;
}

export type StrategyModel =
  | { type: 'RollingUpdate'; maxSurge: IntOrPercent; maxUnavailable: IntOrPercent }
  | { type: 'Recreate' };

export interface WorkloadModel {
  replicas: number;
  /** Selector labels shared by both sides; each side adds its own app.kubernetes.io/instance. */
  selectorLabels: Record<string, string>;
  template: TemplateModel;
  strategy: StrategyModel;
  minReadySeconds: number;
  revisionHistoryLimit: number;
  progressDeadlineSeconds: number;
  paused: boolean;
}

/** Pods whose template carries this annotation stay Running but never Ready (a kwok stage of the local cluster). */
export { NEVER_READY_ANNOTATION } from '../../e2e/providers/local/kwok-stages.ts';
/** The label that tells the two sides' pods apart; a selector key of both. */
export const SIDE_LABEL = 'app.kubernetes.io/instance';
/** relabelPod sets this selector key (always `web` in the selector) to RELEASED_VALUE. */
export const RELEASE_LABEL = 'app.kubernetes.io/name';
export const RELEASED_VALUE = 'released';

/** Every operation kind; the generator can include or exclude each. */
export const OP_KINDS = [
  'scale',
  'scaleSubresource',
  'image',
  'templateLabel',
  'neverReady',
  'pause',
  'resume',
  'rollback',
  'rollingParams',
  'minReadySeconds',
  'revisionHistoryLimit',
  'progressDeadlineSeconds',
  'strategy',
  'deletePod',
  'orphanPod',
  /** Selector and template labels with app.kubernetes.io/managed-by: Helm (chosen at create). */
  'helmLabels',
  'relabelPod',
  'orphanCascade',
  /** Needs the operator as a child process (the session starts it so when this kind is included). */
  'restartOperator',
  'burst',
] as const;
/** The kinds before relabelPod: the fixed seeds of `npm test` were chosen from these. */
export const CLASSIC_KINDS: readonly OpKind[] = OP_KINDS.slice(0, OP_KINDS.indexOf('relabelPod'));
export type OpKind = (typeof OP_KINDS)[number];

export type Op =
  | { kind: 'create'; model: WorkloadModel }
  | { kind: 'scale'; replicas: number }
  | { kind: 'scaleSubresource'; replicas: number }
  | { kind: 'image'; image: string }
  | { kind: 'templateLabel'; key: string; value: string | null }
  | { kind: 'neverReady'; on: boolean }
  | { kind: 'pause' }
  | { kind: 'resume' }
  | { kind: 'rollback'; template: TemplateModel; toStep: number }
  | { kind: 'rollingParams'; maxSurge: IntOrPercent; maxUnavailable: IntOrPercent }
  | { kind: 'minReadySeconds'; value: number }
  | { kind: 'revisionHistoryLimit'; value: number }
  | { kind: 'progressDeadlineSeconds'; value: number }
  | { kind: 'strategy'; strategy: StrategyModel }
  | { kind: 'deletePod'; index: number }
  | { kind: 'orphanPod'; withHash: boolean }
  | { kind: 'relabelPod'; index: number }
  | { kind: 'orphanCascade' }
  | { kind: 'restartOperator'; delayMs: number }
  | { kind: 'burst'; ops: Op[] };

/** The model after `op` (pure; pod operations leave it unchanged). */
export function applyOp(model: WorkloadModel, op: Op): WorkloadModel {
  const m = structuredClone(model);
  switch (op.kind) {
    case 'create':
      return structuredClone(op.model);
    case 'scale':
    case 'scaleSubresource':
      m.replicas = op.replicas;
      return m;
    case 'image':
      m.template.image = op.image;
      return m;
    case 'templateLabel':
      if (op.value === null) delete m.template.extraLabels[op.key];
      else m.template.extraLabels[op.key] = op.value;
      return m;
    case 'neverReady':
      m.template.neverReady = op.on;
      return m;
    case 'pause':
      m.paused = true;
      return m;
    case 'resume':
      m.paused = false;
      return m;
    case 'rollback':
      m.template = structuredClone(op.template);
      return m;
    case 'rollingParams':
      m.strategy = { type: 'RollingUpdate', maxSurge: op.maxSurge, maxUnavailable: op.maxUnavailable };
      return m;
    case 'minReadySeconds':
      m.minReadySeconds = op.value;
      return m;
    case 'revisionHistoryLimit':
      m.revisionHistoryLimit = op.value;
      return m;
    case 'progressDeadlineSeconds':
      m.progressDeadlineSeconds = op.value;
      return m;
    case 'strategy':
      m.strategy = structuredClone(op.strategy);
      return m;
    case 'burst':
      return op.ops.reduce(applyOp, m);
    case 'deletePod':
    case 'orphanPod':
    case 'relabelPod':
    case 'orphanCascade':
    case 'restartOperator':
      return m;
  }
}

export function describeTemplate(t: TemplateModel): string {
  const labels = Object.entries(t.extraLabels)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`);
  return [t.image, ...(t.neverReady ? ['never-ready'] : []), ...labels].join(' ');
}

function describeStrategy(s: StrategyModel): string {
  return s.type === 'Recreate'
    ? 'Recreate'
    : `RollingUpdate maxSurge=${s.maxSurge} maxUnavailable=${s.maxUnavailable}`;
}

/** One line per operation, for the reproduction steps a divergence prints. */
export function describeOp(op: Op): string {
  switch (op.kind) {
    case 'create': {
      const m = op.model;
      const selector = Object.entries(m.selectorLabels)
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      return (
        `create replicas=${m.replicas} selector={${selector}} template=[${describeTemplate(m.template)}] ` +
        `${describeStrategy(m.strategy)} minReadySeconds=${m.minReadySeconds} ` +
        `revisionHistoryLimit=${m.revisionHistoryLimit} progressDeadlineSeconds=${m.progressDeadlineSeconds}` +
        (m.paused ? ' paused' : '')
      );
    }
    case 'scale':
      return `scale spec.replicas=${op.replicas}`;
    case 'scaleSubresource':
      return `scale through the scale subresource to ${op.replicas}`;
    case 'image':
      return `set image ${op.image}`;
    case 'templateLabel':
      return op.value === null
        ? `remove template label ${op.key}`
        : `set template label ${op.key}=${op.value}`;
    case 'neverReady':
      return op.on ? 'template: pods never become Ready' : 'template: pods become Ready again';
    case 'pause':
      return 'pause';
    case 'resume':
      return 'resume';
    case 'rollback':
      return `roll back to the template of step ${op.toStep} [${describeTemplate(op.template)}]`;
    case 'rollingParams':
      return `set maxSurge=${op.maxSurge} maxUnavailable=${op.maxUnavailable}`;
    case 'minReadySeconds':
      return `set minReadySeconds=${op.value}`;
    case 'revisionHistoryLimit':
      return `set revisionHistoryLimit=${op.value}`;
    case 'progressDeadlineSeconds':
      return `set progressDeadlineSeconds=${op.value}`;
    case 'strategy':
      return `switch strategy to ${describeStrategy(op.strategy)}`;
    case 'deletePod':
      return `delete live pod #${op.index} (by creation time, then name)`;
    case 'orphanPod':
      return op.withHash
        ? "create an orphan pod with the template's labels and the newest set's pod-template-hash"
        : "create an orphan pod with the template's labels (no pod-template-hash)";
    case 'relabelPod':
      return `relabel live pod #${op.index} out of its set (${RELEASE_LABEL}=${RELEASED_VALUE})`;
    case 'orphanCascade':
      return 'delete the workload with --cascade=orphan, wait until it is gone, create it again';
    case 'restartOperator':
      return `after ${op.delayMs} ms, SIGKILL the operator (and kube-controller-manager, on a cluster of its own) and start it again`;
    case 'burst':
      return `back to back, without settling in between: ${op.ops.map(describeOp).join('; then ')}`;
  }
}

/** Resolves maxSurge (round up) or maxUnavailable (round down) against `replicas`, as apps/v1 does. */
export function resolveIntOrPercent(value: IntOrPercent, replicas: number, roundUp: boolean): number {
  if (typeof value === 'number') return value;
  const pct = Number(value.slice(0, -1));
  const raw = (pct * replicas) / 100;
  return roundUp ? Math.ceil(raw) : Math.floor(raw);
}

/** apps/v1's ResolveFenceposts: both zero means maxUnavailable 1. */
export function fenceposts(model: WorkloadModel): { surge: number; unavailable: number } {
  if (model.strategy.type === 'Recreate') return { surge: 0, unavailable: model.replicas };
  const surge = resolveIntOrPercent(model.strategy.maxSurge, model.replicas, true);
  let unavailable = resolveIntOrPercent(model.strategy.maxUnavailable, model.replicas, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable: Math.min(unavailable, model.replicas) };
}
