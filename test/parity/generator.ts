import {
  applyOp,
  describeTemplate,
  type IntOrPercent,
  OP_KINDS,
  type Op,
  type OpKind,
  RELEASE_LABEL,
  type StrategyModel,
  type TemplateModel,
  type WorkloadModel,
} from './model.ts';
import { Prng } from './prng.ts';

export const IMAGES = [
  'registry.k8s.io/pause:3.10',
  'registry.k8s.io/pause:3.9',
  'registry.k8s.io/pause:3.8',
];
const MAX_REPLICAS = 5;
const SURGES: IntOrPercent[] = [0, 1, 2, '25%', '50%'];
const UNAVAILABLES: IntOrPercent[] = [0, 1, '25%', '50%'];
const MIN_READY_SECONDS = [0, 0, 1, 2];
/** Short deadlines so a stuck rollout reaches ProgressDeadlineExceeded within a step. */
const PROGRESS_DEADLINES = [6, 10, 600];
const HISTORY_LIMITS = [0, 1, 2, 10];
const TEMPLATE_LABEL_KEYS = ['app.kubernetes.io/version', 'app.kubernetes.io/part-of'];
const HELM = 'app.kubernetes.io/managed-by';

const WEIGHTS: Record<OpKind, number> = {
  scale: 3,
  scaleSubresource: 2,
  image: 3,
  templateLabel: 1,
  neverReady: 2,
  pause: 1,
  resume: 3,
  rollback: 2,
  rollingParams: 1,
  minReadySeconds: 1,
  revisionHistoryLimit: 1,
  progressDeadlineSeconds: 1,
  strategy: 1,
  deletePod: 2,
  orphanPod: 1,
  helmLabels: 0, // a property of create and templateLabel, never a step of its own
  relabelPod: 1,
  orphanCascade: 1,
  restartOperator: 1,
  burst: 2,
};

/**
 * Kinds a burst never holds: orphanCascade and restartOperator wait for something of their own (a
 * deletion, a restart); relabelPod in the middle of a rollout takes whichever pod is #i at that
 * instant, one the set is about to delete on one side and one it keeps on the other (a pod released
 * for good on one side only).
 */
const NOT_IN_BURST: ReadonlySet<OpKind> = new Set([
  'burst',
  'orphanCascade',
  'restartOperator',
  'relabelPod',
  'helmLabels',
]);
/**
 * Kinds a burst never holds after a template change. A rollout's pace changed right behind its
 * template makes where a stuck rollout rests depend on which of the specs each controller acted
 * on: the operator, faster to its second sync, scaled the old set down under the old
 * maxUnavailable before the tighter one arrived; kube-controller-manager saw only the tighter one
 * (seed 54 of the 100-seed run with --restart-kcm; both rest legal under apps/v1, with pods that
 * never become Ready neither moves again).
 */
const RULES_AFTER_TEMPLATE: ReadonlySet<Op['kind']> = new Set(['rollingParams', 'strategy']);
// Nor a second template change: whether a controller saw the template in between is timing, and
// what it leaves behind stays: a rollout whose pods never become Ready keeps how far it got (seed 136
// of the 100-seed run: kube-controller-manager finished the rollout to the Ready template in between,
// the operator never started it), and a set made for it stays in the history and takes a revision
// (seed 162 of a later run: kube-controller-manager kept the set of the image in between).

const RESTART_DELAYS_MS = [0, 100, 300, 700, 1500];

export interface GeneratorOptions {
  /** Operations after the create step. */
  steps: number;
  kinds?: ReadonlySet<OpKind>;
}

export function parseKinds(
  spec: string | undefined,
  base: ReadonlySet<OpKind> = new Set(OP_KINDS),
): Set<OpKind> {
  const kinds = new Set(base);
  if (!spec) return kinds;
  for (const raw of spec.split(',').map((s) => s.trim())) {
    if (!raw) continue;
    const exclude = raw.startsWith('-');
    const name = (exclude ? raw.slice(1) : raw) as OpKind;
    if (!OP_KINDS.includes(name)) {
      throw new Error(`unknown operation kind "${name}"; known: ${OP_KINDS.join(', ')}`);
    }
    if (exclude) kinds.delete(name);
    else kinds.add(name);
  }
  return kinds;
}

function rollingStrategy(rng: Prng): StrategyModel {
  const maxSurge = rng.pick(SURGES);
  let maxUnavailable = rng.pick(UNAVAILABLES);
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { type: 'RollingUpdate', maxSurge, maxUnavailable };
}

function initialModel(rng: Prng, kinds: ReadonlySet<OpKind>): WorkloadModel {
  const selectorLabels: Record<string, string> = { [RELEASE_LABEL]: 'web' };
  if (rng.chance(0.5)) selectorLabels['app.kubernetes.io/component'] = 'server';
  if (kinds.has('helmLabels') && rng.chance(0.3)) selectorLabels[HELM] = 'Helm';
  const extraLabels: Record<string, string> = {};
  if (rng.chance(0.5)) extraLabels['app.kubernetes.io/version'] = '1';
  const minReadySeconds = rng.pick(MIN_READY_SECONDS);
  return {
    replicas: rng.int(1, 4),
    selectorLabels,
    template: { image: rng.pick(IMAGES), neverReady: false, extraLabels },
    strategy: rng.chance(0.7) ? rollingStrategy(rng) : { type: 'Recreate' },
    minReadySeconds,
    revisionHistoryLimit: rng.pick(HISTORY_LIMITS),
    progressDeadlineSeconds: rng.pick(PROGRESS_DEADLINES.filter((d) => d > minReadySeconds)),
    paused: false,
  };
}

interface History {
  template: TemplateModel;
  step: number;
}

/** Candidate operations for the current model, or undefined when the kind does not apply now. */
function candidate(
  kind: OpKind,
  rng: Prng,
  model: WorkloadModel,
  history: History[],
  kinds: ReadonlySet<OpKind>,
): Op | undefined {
  switch (kind) {
    case 'scale':
    case 'scaleSubresource': {
      const choices = Array.from({ length: MAX_REPLICAS + 1 }, (_, i) => i).filter(
        (n) => n !== model.replicas,
      );
      return { kind, replicas: rng.pick(choices) };
    }
    case 'image':
      return { kind, image: rng.pick(IMAGES.filter((i) => i !== model.template.image)) };
    case 'templateLabel': {
      const keys = [...TEMPLATE_LABEL_KEYS, ...(kinds.has('helmLabels') ? [HELM] : [])].filter(
        (k) => !(k in model.selectorLabels),
      );
      const key = rng.pick(keys);
      const current = model.template.extraLabels[key];
      if (current !== undefined && rng.chance(0.5)) return { kind, key, value: null };
      const value = key === HELM ? 'Helm' : String(rng.int(1, 3));
      return value === current ? { kind, key, value: null } : { kind, key, value };
    }
    case 'neverReady':
      return { kind, on: !model.template.neverReady };
    case 'pause':
      return model.paused ? undefined : { kind };
    case 'resume':
      return model.paused ? { kind } : undefined;
    case 'rollback': {
      const current = describeTemplate(model.template);
      const earlier = history.filter((h) => describeTemplate(h.template) !== current);
      if (earlier.length === 0) return undefined;
      const to = rng.pick(earlier);
      return { kind, template: structuredClone(to.template), toStep: to.step };
    }
    case 'rollingParams': {
      if (model.strategy.type !== 'RollingUpdate') return undefined;
      const s = rollingStrategy(rng);
      return s.type === 'RollingUpdate'
        ? { kind, maxSurge: s.maxSurge, maxUnavailable: s.maxUnavailable }
        : undefined;
    }
    case 'minReadySeconds': {
      const choices = [0, 1, 2].filter(
        (v) => v !== model.minReadySeconds && v < model.progressDeadlineSeconds,
      );
      return choices.length ? { kind, value: rng.pick(choices) } : undefined;
    }
    case 'revisionHistoryLimit': {
      const choices = HISTORY_LIMITS.filter((v) => v !== model.revisionHistoryLimit);
      return { kind, value: rng.pick(choices) };
    }
    case 'progressDeadlineSeconds': {
      const choices = PROGRESS_DEADLINES.filter(
        (v) => v !== model.progressDeadlineSeconds && v > model.minReadySeconds,
      );
      return choices.length ? { kind, value: rng.pick(choices) } : undefined;
    }
    case 'strategy':
      return {
        kind,
        strategy: model.strategy.type === 'RollingUpdate' ? { type: 'Recreate' } : rollingStrategy(rng),
      };
    case 'deletePod':
      return model.replicas > 0 ? { kind, index: rng.int(0, model.replicas - 1) } : undefined;
    case 'orphanPod':
      return { kind, withHash: rng.chance(0.7) };
    case 'relabelPod':
      return model.replicas > 0 ? { kind, index: rng.int(0, model.replicas - 1) } : undefined;
    case 'orphanCascade':
      return { kind };
    case 'restartOperator': {
      const restart: Op = { kind, delayMs: rng.pick(RESTART_DELAYS_MS) };
      // Mostly in the middle of a rollout: a template change, then the kill without waiting.
      if (model.paused || !rng.chance(0.7)) return restart;
      const change = candidate(rng.pick(['image', 'rollback'] as const), rng, model, history, kinds);
      return change ? { kind: 'burst', ops: [change, restart] } : restart;
    }
    case 'burst': {
      const inner = OP_KINDS.filter((k) => kinds.has(k) && WEIGHTS[k] > 0 && !NOT_IN_BURST.has(k));
      if (inner.length === 0) return undefined;
      const ops: Op[] = [];
      let m = model;
      const count = rng.int(2, 3);
      for (let attempt = 0; attempt < 20 && ops.length < count; attempt++) {
        const op = candidate(
          rng.weighted(inner.map((k) => [k, WEIGHTS[k]] as const)),
          rng,
          m,
          history,
          kinds,
        );
        if (!op) continue;
        const templateChanged = describeTemplate(m.template) !== describeTemplate(model.template);
        if (templateChanged && RULES_AFTER_TEMPLATE.has(op.kind)) continue;
        const next = applyOp(m, op);
        if (templateChanged && describeTemplate(next.template) !== describeTemplate(m.template)) continue;
        ops.push(op);
        m = applyOp(m, op);
      }
      return ops.length >= 2 ? { kind, ops } : undefined;
    }
    case 'helmLabels':
      return undefined;
  }
}

/**
 * The operations of one seed: a create, then `steps` operations drawn by weight from the included
 * kinds that apply to the model at that point. Pure: the same seed, steps and kinds give the same list.
 */
export function generate(seed: number, options: GeneratorOptions): Op[] {
  const kinds = options.kinds ?? new Set(OP_KINDS);
  const rng = new Prng(seed);
  let model = initialModel(rng, kinds);
  const ops: Op[] = [{ kind: 'create', model: structuredClone(model) }];
  const history: History[] = [{ template: structuredClone(model.template), step: 0 }];
  for (let step = 1; step <= options.steps; step++) {
    const available = OP_KINDS.filter((k) => kinds.has(k) && WEIGHTS[k] > 0);
    let op: Op | undefined;
    for (let attempt = 0; attempt < 50 && !op; attempt++) {
      const kind = rng.weighted(available.map((k) => [k, WEIGHTS[k]] as const));
      op = candidate(kind, rng, model, history, kinds);
    }
    if (!op) break;
    ops.push(op);
    const before = describeTemplate(model.template);
    model = applyOp(model, op);
    if (describeTemplate(model.template) !== before) {
      history.push({ template: structuredClone(model.template), step });
    }
  }
  return ops;
}
