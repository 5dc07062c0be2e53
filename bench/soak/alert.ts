import type { ReconcileErrorsRule } from './chart.ts';
import type { FailureLine, MetricsSample } from './operator.ts';

/** The ReconcileErrors alert's expression for one namespace over one phase of the soak. */
export interface NamespaceEvaluation {
  /** Per controller: the expression's highest value at any reading of the phase (errors / reconciles over the window). */
  highest: Record<string, number>;
  /** Per controller: the longest time the expression stayed above the threshold (the alert fires after `for`). */
  aboveSeconds: Record<string, number>;
  /** Whether it would fire for this namespace: above the threshold for the rule's `for`. */
  fires: boolean;
}

/** The ReconcileErrors alert's expression over one phase of the soak, each namespace apart. */
export interface AlertEvaluation {
  /** Every namespace with reconciles over the window of a reading of the phase ("" for cluster-scoped objects). */
  byNamespace: Record<string, NamespaceEvaluation>;
  /** Failed reconciles and status writes in the phase's own namespace, from the operator's log. */
  failuresInNamespace: number;
}

/**
 * `sum by (controller, object_namespace) (rate(reconciles{result="error"}[W])) / sum by (controller,
 * object_namespace) (rate(reconciles[W])) > ratio`, the chart's alert on basic_operator_reconciles_total,
 * evaluated at every reading of the operator's /metrics from `from` to `to`, each over the readings
 * of the W before it (those of before the phase too, as Prometheus would), counters that went back
 * to zero (a restart) counted as started again. Each namespace is a series of its own, as the alert
 * sees it: the normal tenant's value apart from the hostile one's. What the phase's own namespace
 * failed is also counted from the log lines, which name it.
 */
export function evaluateReconcileErrors(
  rule: ReconcileErrorsRule,
  samples: readonly MetricsSample[],
  failures: readonly FailureLine[],
  phase: { namespace: string; from: number; to: number },
): AlertEvaluation {
  const byNamespace: Record<string, NamespaceEvaluation> = {};
  const aboveSince = new Map<string, number>();
  const windowMs = rule.windowSeconds * 1000;
  for (const [i, at] of samples.entries()) {
    if (at.at < phase.from || at.at > phase.to) continue;
    const window = samples.slice(0, i + 1).filter((s) => s.at >= at.at - windowMs);
    for (const [controller, namespaces] of Object.entries(at.reconciles)) {
      for (const namespace of Object.keys(namespaces)) {
        const count = (of: (s: MetricsSample) => MetricsSample['reconciles']) =>
          increase(window.map((s) => of(s)[controller]?.[namespace] ?? 0));
        const reconciles = count((s) => s.reconciles);
        if (reconciles === 0) continue; // no rate: no series, nothing to compare
        const ratio = count((s) => s.errors) / reconciles;
        const evaluation = byNamespace[namespace] ?? { highest: {}, aboveSeconds: {}, fires: false };
        byNamespace[namespace] = evaluation;
        evaluation.highest[controller] = Math.max(evaluation.highest[controller] ?? 0, ratio);
        const series = `${controller}\t${namespace}`;
        if (ratio > rule.ratio) {
          const since = aboveSince.get(series) ?? at.at;
          aboveSince.set(series, since);
          const seconds = Math.max(evaluation.aboveSeconds[controller] ?? 0, (at.at - since) / 1000);
          evaluation.aboveSeconds[controller] = seconds;
          if (seconds >= rule.forSeconds) evaluation.fires = true;
        } else {
          aboveSince.delete(series);
        }
      }
    }
  }
  return {
    byNamespace,
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
