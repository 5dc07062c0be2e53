import { readFileSync } from 'node:fs';
import { load } from 'js-yaml';
import { chartMemoryLimit, parseMemory } from '../measure/memory-cgroup.ts';

/**
 * What the soak takes from the chart, so that the operator runs as an install with the defaults
 * runs it and is judged by the chart's own alert: its client budget, its workers, its memory limit,
 * and the ReconcileErrors alert's window, duration and threshold.
 */
export interface ChartDefaults {
  qps: number;
  burst: number;
  workers: number;
  memoryLimitBytes: number;
  reconcileErrors: ReconcileErrorsRule;
}

/** BasicOperatorReconcileErrors: errors / reconciles per controller and namespace over `windowSeconds` > `ratio`, for `forSeconds`. */
export interface ReconcileErrorsRule {
  windowSeconds: number;
  forSeconds: number;
  ratio: number;
}

interface Values {
  kubeApi: { qps: number; burst: number };
  concurrency: { default: number };
  prometheusRule: { reconcileErrorRatio: number };
}

const CHART = 'charts/basic-operator';

export function chartDefaults(chart = CHART): ChartDefaults {
  const values = load(readFileSync(`${chart}/values.yaml`, 'utf8')) as Values;
  const { qps, burst } = values.kubeApi;
  return {
    qps,
    // The chart's "0 means 1.5 x qps" (values.yaml, kubeApi).
    burst: burst === 0 ? Math.round(qps * 1.5) : burst,
    workers: values.concurrency.default,
    memoryLimitBytes: parseMemory(chartMemoryLimit(`${chart}/values.yaml`)),
    reconcileErrors: reconcileErrorsRule(
      readFileSync(`${chart}/templates/prometheusrule.yaml`, 'utf8'),
      values.prometheusRule.reconcileErrorRatio,
    ),
  };
}

/**
 * The alert's rate window and `for:` from its template; the threshold is a value of the chart. The
 * soak evaluates it per controller and namespace (bench/soak/alert.ts): a rule grouped otherwise fails here.
 */
export function reconcileErrorsRule(template: string, ratio: number): ReconcileErrorsRule {
  const rule = template.slice(template.indexOf('alert: BasicOperatorReconcileErrors'));
  const expr = rule.slice(0, rule.search(/\n\s+for: /));
  const window = /rate\(basic_operator_reconciles_total.*?\[(\w+)\]\)/.exec(expr)?.[1];
  const duration = /\n\s+for: (\w+)/.exec(rule)?.[1];
  if (!window || !duration)
    throw new Error(
      'prometheusrule.yaml: no BasicOperatorReconcileErrors rule on basic_operator_reconciles_total with a rate window and a for:',
    );
  const grouped = expr.match(
    /sum by \(controller, object_namespace\) \(rate\(basic_operator_reconciles_total\b/g,
  );
  if (grouped?.length !== 2)
    throw new Error(
      'prometheusrule.yaml: BasicOperatorReconcileErrors is not a ratio by (controller, object_namespace), as the soak evaluates it',
    );
  return { windowSeconds: seconds(window), forSeconds: seconds(duration), ratio };
}

/** A Prometheus duration of one unit: "5m", "15m", "30s", "1h". */
function seconds(duration: string): number {
  const m = /^(\d+)(s|m|h)$/.exec(duration);
  if (!m) throw new Error(`not a duration this reads: ${duration}`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] as 's' | 'm' | 'h'];
}
