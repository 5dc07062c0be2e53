import { Gauge, type Registry } from 'prom-client';
import type { BasicDeployment } from '../../apis/index.ts';
import { findCondition } from '../../runtime/write/conditions.ts';
import { ProgressReason } from './logic/progress.ts';

/** BasicDeployments whose rollout has stopped at its progress deadline (Progressing=False, ProgressDeadlineExceeded). */
export function pastProgressDeadline(deployments: readonly BasicDeployment[]): number {
  let count = 0;
  for (const deployment of deployments) {
    const progressing = findCondition(deployment.status?.conditions, 'Progressing');
    if (progressing?.status === 'False' && progressing.reason === ProgressReason.ProgressDeadlineExceeded)
      count += 1;
  }
  return count;
}

/**
 * Gauges computed from the informer cache when Prometheus scrapes (one pass over the cached
 * BasicDeployments, no timer). No labels: a name label would make a series per deployment, and a
 * `namespace` label would clash with the target's own (Prometheus renames it to exported_namespace)
 * and grow with tenants; the runbook finds the deployments with kubectl. Every replica reports them.
 */
export function registerBasicDeploymentMetrics(
  registry: Registry,
  deployments: () => readonly BasicDeployment[],
): void {
  new Gauge({
    name: 'basic_operator_basicdeployments',
    help: 'Number of BasicDeployments.',
    registers: [registry],
    collect() {
      this.set(deployments().length);
    },
  });
  new Gauge({
    name: 'basic_operator_basicdeployments_progress_deadline_exceeded',
    help: 'Number of BasicDeployments whose rollout exceeded its progress deadline (Progressing=False, reason ProgressDeadlineExceeded).',
    registers: [registry],
    collect() {
      this.set(pastProgressDeadline(deployments()));
    },
  });
}
