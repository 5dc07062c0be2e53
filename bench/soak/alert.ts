import type { ReconcileErrorsRule } from './chart.ts';
import type { FailureLine, MetricsSample } from './operator.ts';

/** The ReconcileErrors alert's expression over one phase of the soak. */
export interface AlertEvaluation {
  /** Per controller: the expression's highest value at any reading of the phase (errors / reconciles over the window). */
  highest: Record<string, number>;
  /** Per controller: the longest time the expression stayed above the threshold (the alert fires after `for`). */
  aboveSeconds: Record<string, number>;
  /** Whether it would fire: above the threshold for the rule's `for`. */
  fires: boolean;
  /** Failed reconciles and status writes in the phase's own namespace, from the operator's log. */
  failuresInNamespace: number;
}

/**
 * `sum by (controller) (rate(errors[W])) / sum by (controller) (rate(reconciles[W])) > ratio`,
 * evaluated at every reading of the operator's /metrics from `from` to `to`, each over the readings
 * of the W before it (those of before the phase too, as Prometheus would), counters that went back
 * to zero (a restart) counted as started again. The operator's metrics carry the controller, not the
 * namespace: the expression is the whole operator's, as the chart's alert sees it; what the phase's
 * own namespace contributed is counted from the log lines, which name it.
 */
export function evaluateReconcileErrors(
  rule: ReconcileErrorsRule,
  samples: readonly MetricsSample[],
  failures: readonly FailureLine[],
  phase: { namespace: string; from: number; to: number },
): AlertEvaluation {
  const highest: Record<string, number> = {};
  const aboveSeconds: Record<string, number> = {};
  const aboveSince: Record<string, number | undefined> = {};
  const windowMs = rule.windowSeconds * 1000;
  for (const [i, at] of samples.entries()) {
    if (at.at < phase.from || at.at > phase.to) continue;
    const window = samples.slice(0, i + 1).filter((s) => s.at >= at.at - windowMs);
    for (const controller of Object.keys(at.reconciles)) {
      const reconciles = increase(window.map((s) => s.reconciles[controller] ?? 0));
      if (reconciles === 0) continue; // no rate: no series, nothing to compare
      const ratio = increase(window.map((s) => s.errors[controller] ?? 0)) / reconciles;
      highest[controller] = Math.max(highest[controller] ?? 0, ratio);
      if (ratio > rule.ratio) {
        aboveSince[controller] ??= at.at;
        const since = aboveSince[controller];
        aboveSeconds[controller] = Math.max(aboveSeconds[controller] ?? 0, (at.at - since) / 1000);
      } else {
        aboveSince[controller] = undefined;
      }
    }
  }
  return {
    highest,
    aboveSeconds,
    fires: Object.values(aboveSeconds).some((s) => s >= rule.forSeconds),
    failuresInNamespace: failures.filter(
      (f) => f.namespace === phase.namespace && f.at >= phase.from && f.at <= phase.to,
    ).length,
  };
}

/** A counter's increase over readings, as Prometheus counts it: a drop is a reset, counted from 0. */
export function increase(values: readonly number[]): number {
  let total = 0;
  for (let i = 1; i < values.length; i++) {
    const [before, after] = [values[i - 1]!, values[i]!];
    total += after >= before ? after - before : after;
  }
  return total;
}
