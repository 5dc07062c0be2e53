import { ApiError } from '../../src/runtime/client/errors.ts';
import type { KubeClient } from '../../src/runtime/client/kube-client.ts';
import { CoreTypes } from '../../src/runtime/client/resource.ts';
import { applyOp, describeOp, fenceposts, type Op, type WorkloadModel } from './model.ts';
import { diffSnapshots, flatten, pendingReasons, readSide, type Snapshot, snapshot } from './observe.ts';
import type { ParityOperator } from './operator.ts';
import { hotControllers, type RateSample } from './reconcile-rate.ts';
import { SideSampler, type StepSample } from './sampler.ts';
import {
  applyModel,
  createOrphan,
  deleteOrphanAndRecreate,
  deletePod,
  listPods,
  makeSides,
  ORPHAN_PREFIX,
  ownedLivePods,
  relabelPod,
  type Side,
  scaleSubresource,
  workloadObject,
} from './sides.ts';

/** Checks that can be switched off (e.g. to see past a known divergence): snapshot path prefixes or these names. */
export const CHECKS = ['state', 'podLabels', 'bounds', 'ceiling', 'rate'] as const;

export interface RunOptions {
  client: KubeClient;
  namespace: string;
  /** The operator under test: its reconcile counts (without it the rate check is skipped), its restart. */
  operator?: ParityOperator;
  /**
   * SIGKILL kube-controller-manager and start it again, on the kcm side of restartOperator (only on
   * a cluster the harness has to itself). Without it, restartOperator kills only the operator.
   */
  restartKcm?: () => Promise<string>;
  /** A step that has not settled equal by then is a divergence. */
  stepTimeoutMs?: number;
  /** A side counts as settled once its snapshot has not changed for this long. */
  quietMs?: number;
  /** Both settled but different for this long is a divergence (no need to wait for the timeout). */
  unequalGraceMs?: number;
  /** Check names from CHECKS, or snapshot path prefixes (e.g. "conditions.Available") to ignore. */
  skip?: readonly string[];
  log?: (line: string) => void;
}

export type DivergenceKind = 'state' | 'bounds' | 'ceiling' | 'rate' | 'error';

export interface Divergence {
  step: number;
  kind: DivergenceKind;
  lines: string[];
}

export interface SeedResult {
  seed: number;
  ops: Op[];
  /** Steps that ran clean (the create included). */
  cleanSteps: number;
  divergence?: Divergence;
  durationMs: number;
}

const errorText = (err: unknown) =>
  err instanceof ApiError
    ? `${err.statusCode} ${err.message}`
    : err instanceof Error
      ? err.message
      : String(err);

async function perform(
  options: RunOptions,
  side: Side,
  op: Exclude<Op, { kind: 'burst' }>,
  model: WorkloadModel,
  serial: string,
  among?: ReadonlySet<string>,
): Promise<string | undefined> {
  const { client, namespace } = options;
  switch (op.kind) {
    case 'create':
      await client.create(side.workloadType, workloadObject(side, namespace, model));
      return undefined;
    case 'scaleSubresource':
      await scaleSubresource(client, side, namespace, op.replicas);
      return undefined;
    case 'deletePod':
      return deletePod(client, side, namespace, op.index, among);
    case 'orphanPod':
      return createOrphan(client, side, namespace, model, op.withHash, serial);
    case 'relabelPod':
      return relabelPod(client, side, namespace, op.index, among);
    case 'orphanCascade':
      return deleteOrphanAndRecreate(client, side, namespace, model);
    case 'restartOperator': {
      if (side.id === 'kcm') {
        // Only on a cluster of the harness's own: the shared cluster's other tests depend on it.
        if (!options.restartKcm) return undefined;
        await new Promise((r) => setTimeout(r, op.delayMs));
        return options.restartKcm();
      }
      const restart = options.operator?.restart;
      if (!restart) throw new Error('restartOperator needs the operator in a process of its own');
      await new Promise((r) => setTimeout(r, op.delayMs));
      return restart();
    }
    default:
      await applyModel(client, side, namespace, model);
      return undefined;
  }
}

/**
 * Applies `op` to both sides at once; a burst's operations one after another, each to both sides,
 * without waiting for anything in between. A burst's pod operations pick among the pods each side
 * had before it, so both sides pick the same way. Returns the notes of each side and the failures.
 */
async function performBoth(
  options: RunOptions,
  sides: readonly Side[],
  op: Op,
  before: WorkloadModel,
  serial: string,
  among?: ReadonlyMap<Side, ReadonlySet<string>>,
): Promise<{ notes: string[]; failures: string[] }> {
  if (op.kind === 'burst') {
    const notes: string[] = [];
    let model = before;
    const picks = op.ops.some((o) => o.kind === 'deletePod' || o.kind === 'relabelPod');
    const podsBefore = picks
      ? new Map(
          await Promise.all(
            sides.map(
              async (side) =>
                [
                  side,
                  new Set(
                    (await ownedLivePods(options.client, side, options.namespace)).map(
                      (p) => p.metadata?.name ?? '',
                    ),
                  ),
                ] as const,
            ),
          ),
        )
      : undefined;
    for (const [i, inner] of op.ops.entries()) {
      const after = applyOp(model, inner);
      const r = await performBoth(options, sides, inner, model, `${serial}-${i}`, podsBefore);
      notes.push(...r.notes);
      if (r.failures.length) return { notes, failures: r.failures };
      model = after;
    }
    return { notes, failures: [] };
  }
  const after = applyOp(before, op);
  const outcomes = await Promise.allSettled(
    sides.map((side) => perform(options, side, op, after, serial, among?.get(side))),
  );
  return {
    notes: outcomes.flatMap((o, i) =>
      o.status === 'fulfilled' && o.value ? [`${sides[i]!.id} ${o.value}`] : [],
    ),
    failures: outcomes.flatMap((o, i) =>
      o.status === 'rejected' ? [`${sides[i]!.id} rejected it: ${errorText(o.reason)}`] : [],
    ),
  };
}

/** Every model a step passes through: before it, after each operation of a burst, after it. */
function modelsOf(before: WorkloadModel | undefined, op: Op, after: WorkloadModel): WorkloadModel[] {
  const models = before ? [before] : [];
  if (op.kind === 'burst' && before) {
    let m = before;
    for (const inner of op.ops) {
      m = applyOp(m, inner);
      models.push(m);
    }
  }
  return [...models, after];
}

interface SettleOutcome {
  ok: boolean;
  lines: string[];
  quietSince: number;
  rateSamples: RateSample[];
  setCount: number;
  elapsedMs: number;
}

/**
 * Polls both sides until both are at rest (snapshot unchanged for quietMs, nothing pending) and
 * equal; fails with the differences and whatever was still pending when the step times out, when
 * both rest unequal for unequalGraceMs, or at once when `aborted()` says so (pod ceiling).
 */
async function settle(
  client: KubeClient,
  sides: readonly Side[],
  namespace: string,
  model: WorkloadModel,
  options: Required<Pick<RunOptions, 'stepTimeoutMs' | 'quietMs' | 'unequalGraceMs'>> & RunOptions,
  aborted: () => string | undefined,
  rolloutSince?: number,
): Promise<SettleOutcome> {
  const started = Date.now();
  const deadline = started + options.stepTimeoutMs;
  const lastFlat: string[] = sides.map(() => '');
  const lastChange: number[] = sides.map(() => started);
  const rateSamples: RateSample[] = [];
  let unequalSince: number | undefined;
  let snaps: Snapshot[] = [];
  let pending: string[][] = [];
  const skip = options.skip ?? [];
  const diffSkip = skip.filter((s) => s !== 'state').map((s) => (s === 'podLabels' ? 'podLabels[' : s));
  for (;;) {
    const states = await Promise.all(sides.map((side) => readSide(client, side, namespace, rolloutSince)));
    const now = Date.now();
    snaps = states.map(snapshot);
    snaps.forEach((snap, i) => {
      const flat = JSON.stringify([...flatten(snap)]);
      if (flat !== lastFlat[i]) {
        lastFlat[i] = flat;
        lastChange[i] = now;
      }
    });
    const counts = await options.operator?.reconcileCounts();
    if (counts) rateSamples.push({ at: now, counts });
    pending = states.map((state) => pendingReasons(state, model, now, deadline));
    const quietSince = Math.max(...lastChange);
    const settled = now - quietSince >= options.quietMs && pending.every((p) => p.length === 0);
    const setCount = states[1]?.sets.length ?? 0;
    const outcome = (ok: boolean, lines: string[]): SettleOutcome => ({
      ok,
      lines,
      quietSince,
      rateSamples,
      setCount,
      elapsedMs: now - started,
    });
    const abortReason = aborted();
    if (abortReason) return outcome(false, [abortReason, ...diffSnapshots(snaps[0]!, snaps[1]!, diffSkip)]);
    if (settled) {
      const diff = skip.includes('state') ? [] : diffSnapshots(snaps[0]!, snaps[1]!, diffSkip);
      if (diff.length === 0) return outcome(true, []);
      unequalSince ??= now;
      if (now - unequalSince >= options.unequalGraceMs) {
        return outcome(false, [
          `both sides at rest but different for ${((now - unequalSince) / 1000).toFixed(1)}s:`,
          ...diff.map((d) => `  ${d}`),
        ]);
      }
    } else {
      unequalSince = undefined;
    }
    if (now > deadline) {
      const lines = [`not settled equal within ${options.stepTimeoutMs / 1000}s:`];
      lines.push(...diffSnapshots(snaps[0]!, snaps[1]!, diffSkip).map((d) => `  ${d}`));
      sides.forEach((side, i) => {
        const quiet = ((now - lastChange[i]!) / 1000).toFixed(1);
        const reasons = pending[i]!.length ? pending[i]!.join('; ') : 'nothing pending';
        lines.push(`  ${side.id}: unchanged for ${quiet}s; ${reasons}`);
      });
      return outcome(false, lines);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Bounds sampled during the step: ours may not go beyond both apps/v1's bound and what KCM did. */
function boundViolations(models: readonly WorkloadModel[], kcm: StepSample, bo: StepSample): string[] {
  const surgeBound = Math.max(...models.map((m) => m.replicas + fenceposts(m).surge));
  const readyBound = Math.min(...models.map((m) => m.replicas - fenceposts(m).unavailable));
  const lines: string[] = [];
  if (bo.maxSetReplicas > Math.max(surgeBound, kcm.maxSetReplicas)) {
    lines.push(
      `surge: bo's sets asked for ${bo.maxSetReplicas} replicas at once; replicas+maxSurge allows ${surgeBound}, kcm's at most ${kcm.maxSetReplicas}`,
    );
  }
  // Pods lag their sets (a pod being deleted still runs), on both sides: one pod of slack.
  if (bo.maxLive > Math.max(surgeBound, kcm.maxLive) + 1) {
    lines.push(
      `surge: bo had ${bo.maxLive} live pods at once; replicas+maxSurge allows ${surgeBound}, kcm had at most ${kcm.maxLive}`,
    );
  }
  if (bo.minReady < Math.min(readyBound, kcm.minReady)) {
    lines.push(
      `unavailability: bo had only ${bo.minReady} ready pods at one point; replicas-maxUnavailable requires ${readyBound}, kcm kept at least ${kcm.minReady}`,
    );
  }
  if (
    models.every((m) => m.strategy.type === 'Recreate') &&
    bo.mixedTemplates > 0 &&
    kcm.mixedTemplates === 0
  ) {
    lines.push(`Recreate: bo had pods of two templates at once at ${bo.mixedTemplates} events, kcm never`);
  }
  return lines;
}

/** Most pods one step may create on a side before it counts as a runaway. */
function podCeiling(models: readonly WorkloadModel[]): number {
  return 2 * Math.max(...models.map((m) => m.replicas + fenceposts(m).surge)) + 4;
}

async function cleanUp(client: KubeClient, sides: readonly Side[], namespace: string): Promise<void> {
  await Promise.all(
    sides.map(async (side) => {
      await client
        .delete(side.workloadType, namespace, side.name, { propagationPolicy: 'Background' })
        .catch(() => undefined);
      const pods = await listPods(client, side, namespace).catch(() => []);
      await Promise.all(
        pods
          .filter((p) => p.metadata?.name?.startsWith(ORPHAN_PREFIX) || !p.metadata?.ownerReferences?.length)
          .map((p) => client.delete(CoreTypes.Pod, namespace, p.metadata!.name!).catch(() => undefined)),
      );
    }),
  );
  // Let the garbage collector finish, so the next seed's reconcile rates are its own.
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const left = await Promise.all(sides.map((side) => listPods(client, side, namespace).catch(() => [])));
    if (left.every((pods) => pods.length === 0)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Runs one seed's operations on both sides, stopping at the first divergence. */
export async function runSeed(seed: number, ops: readonly Op[], options: RunOptions): Promise<SeedResult> {
  const started = Date.now();
  const opts = { stepTimeoutMs: 60_000, quietMs: 1500, unequalGraceMs: 8000, ...options };
  const { client, namespace } = opts;
  const log = opts.log ?? (() => {});
  const skip = new Set(opts.skip ?? []);
  const sides = makeSides(`s${seed}`);
  const samplers = sides.map((side) => new SideSampler(client, side, namespace));
  const result: SeedResult = { seed, ops: [...ops], cleanSteps: 0, durationMs: 0 };
  try {
    await Promise.all(samplers.map((s) => s.ready));
    let model: WorkloadModel | undefined;
    let rolloutSince: number | undefined;
    for (const [step, op] of ops.entries()) {
      const before = model;
      const base = model ?? (op.kind === 'create' ? op.model : undefined);
      if (!base) throw new Error('the first operation must be create');
      const after = applyOp(base, op);
      const models = modelsOf(before, op, after);
      const ceiling = podCeiling(models);
      let ceilingHit: string | undefined;
      samplers.forEach((sampler, i) => {
        sampler.beginStep(ceiling, (created) => {
          if (!skip.has('ceiling')) {
            ceilingHit ??= `runaway: ${sides[i]!.id} created ${created} pods in this step (ceiling ${ceiling})`;
          }
        });
      });
      // When the rollout under way began (the last step that changed the template): kube-controller-
      // manager may keep the Progressing reason of the rollout before it (observe.ts, staleAvailable).
      const template = JSON.stringify(base.template);
      if (models.some((m) => JSON.stringify(m.template) !== template)) rolloutSince = Date.now();
      const { notes, failures } = await performBoth(opts, sides, op, base, String(step));
      if (failures.length > 0) {
        for (const s of samplers) s.endStep();
        result.divergence = { step, kind: 'error', lines: failures };
        break;
      }
      const settled = await settle(client, sides, namespace, after, opts, () => ceilingHit, rolloutSince);
      const [kcm, bo] = samplers.map((s) => s.endStep()) as [StepSample, StepSample];
      log(
        `seed ${seed} step ${step}/${ops.length - 1}: ${describeOp(op)} -> ` +
          `${settled.ok ? 'settled equal' : 'DIVERGED'} in ${(settled.elapsedMs / 1000).toFixed(1)}s ` +
          `(pods created kcm=${kcm.created} bo=${bo.created}; max live ${kcm.maxLive}/${bo.maxLive}; ` +
          `max set replicas ${kcm.maxSetReplicas}/${bo.maxSetReplicas}; ` +
          `min ready ${kcm.minReady}/${bo.minReady}${notes.length ? `; ${notes.join('; ')}` : ''})`,
      );
      if (!settled.ok) {
        result.divergence = { step, kind: ceilingHit ? 'ceiling' : 'state', lines: settled.lines };
        break;
      }
      if (!skip.has('bounds')) {
        const lines = boundViolations(models, kcm, bo);
        // A re-created workload adopts its orphaned sets and their pods: apps/v1 replaces none.
        if (op.kind === 'orphanCascade' && bo.created > kcm.created) {
          lines.push(
            `adoption: bo created ${bo.created} pods after the re-create, kcm ${kcm.created} (the orphaned sets' pods should stay)`,
          );
        }
        if (lines.length) {
          result.divergence = { step, kind: 'bounds', lines };
          break;
        }
      }
      if (opts.operator && !skip.has('rate')) {
        const objects = new Map([
          ['basicdeployment', 1],
          ['basicreplicaset', settled.setCount],
        ]);
        let lines = hotControllers(settled.rateSamples, settled.quietSince, objects);
        // A short rest window cannot tell the tail of the step's events from a loop: a suspect is
        // judged again over a window of its own, which a loop fails and a finished burst passes.
        if (lines.length) lines = await confirmHot(opts.operator, objects);
        if (lines.length) {
          result.divergence = {
            step,
            kind: 'rate',
            lines: ['a controller reconciles hot at rest:', ...lines],
          };
          break;
        }
      }
      model = after;
      result.cleanSteps = step + 1;
    }
  } catch (err) {
    result.divergence = {
      step: result.cleanSteps,
      kind: 'error',
      lines: [`the harness failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`],
    };
  } finally {
    await Promise.all(samplers.map((s) => s.stop()));
    await cleanUp(client, sides, namespace);
  }
  result.durationMs = Date.now() - started;
  return result;
}

/** The report of a divergence: seed, what differed, and the steps to reproduce it. */
export function formatDivergence(result: SeedResult, reproduce: string): string {
  const d = result.divergence;
  if (!d) return `seed ${result.seed}: clean (${result.cleanSteps} steps)`;
  const lines = [
    `PARITY DIVERGENCE seed=${result.seed} at step ${d.step} (${d.kind}):`,
    ...d.lines.map((l) => `    ${l}`),
    `  reproduce: ${reproduce}`,
    '  steps:',
    ...result.ops
      .slice(0, d.step + 1)
      .map((op, i) => `    ${i}. ${describeOp(op)}${i === d.step ? '   <-- diverged here' : ''}`),
  ];
  return lines.join('\n');
}

/** How long a suspected hot loop is watched again before it is reported. */
const RATE_CONFIRM_MS = 5000;

async function confirmHot(operator: ParityOperator, objects: ReadonlyMap<string, number>): Promise<string[]> {
  const first = await operator.reconcileCounts();
  const at = Date.now();
  await new Promise((r) => setTimeout(r, RATE_CONFIRM_MS));
  const last = await operator.reconcileCounts();
  if (!first || !last) return [];
  return hotControllers(
    [
      { at, counts: first },
      { at: Date.now(), counts: last },
    ],
    at,
    objects,
  );
}
